//! What the analysts talk about: business parameters, choices, limits and requirements, each
//! with the phrases that name it in English and Chinese and the shape of its value.
//!
//! Every entry is used at most once per session, so no subject ever carries two values unless
//! a correction says which one is current.

use super::shapes::Shape;

/// A business parameter people state in passing and correct later.
pub(super) struct Param {
    /// Phrases naming it in English; the first is the one used in prose.
    pub en: &'static [&'static str],
    /// Phrases naming it in Chinese; the first is the one used in prose.
    pub zh: &'static [&'static str],
    /// What its value looks like.
    pub shape: Shape,
}

pub(super) const PARAMS: &[Param] = &[
    Param {
        en: &["churn window", "churn-window"],
        zh: &["流失窗口", "流失判定窗口"],
        shape: Shape::Days(30, 90),
    },
    Param {
        en: &[
            "risk cut-off",
            "risk cutoff",
            "at-risk threshold",
            "risk threshold",
        ],
        zh: &["风险阈值", "高风险阈值"],
        shape: Shape::Ratio(550, 920),
    },
    Param {
        en: &["minimum tenure", "min tenure", "tenure"],
        zh: &["最短在网时长", "在网时长"],
        shape: Shape::Days(7, 60),
    },
    Param {
        en: &["trial length", "trial period", "trial"],
        zh: &["试用期", "试用时长"],
        shape: Shape::Days(7, 30),
    },
    Param {
        en: &["baseline churn", "baseline monthly churn", "churn baseline"],
        zh: &["基线流失率", "基线"],
        shape: Shape::Pct1(15, 65),
    },
    Param {
        en: &["ARR target", "ARR goal"],
        zh: &["ARR 目标", "ARR目标"],
        shape: Shape::EurMillions,
    },
    Param {
        en: &[
            "USD→EUR rate",
            "USD→EUR",
            "USD/EUR",
            "FX rate",
            "exchange rate",
        ],
        zh: &["美元兑欧元汇率", "美元兑欧元", "汇率"],
        shape: Shape::Rate4(8800, 9500),
    },
    Param {
        en: &["warehouse refresh time", "warehouse refresh", "refresh"],
        zh: &["数仓刷新时间", "数仓刷新", "刷新"],
        shape: Shape::Clock,
    },
    Param {
        en: &["grace period", "grace"],
        zh: &["宽限期"],
        shape: Shape::Days(3, 21),
    },
    Param {
        en: &["price increase date", "price increase", "price change"],
        zh: &["涨价生效日期", "涨价"],
        shape: Shape::Date,
    },
    Param {
        en: &["VAT rate", "VAT"],
        zh: &["增值税率", "增值税", "税率"],
        shape: Shape::PctInt(5, 25),
    },
    Param {
        en: &["discount cap", "max discount", "maximum discount"],
        zh: &["折扣上限", "最大折扣"],
        shape: Shape::PctInt(10, 45),
    },
    Param {
        en: &["enterprise threshold", "enterprise"],
        zh: &["企业客户门槛", "企业客户"],
        shape: Shape::Seats,
    },
    Param {
        en: &["minimum sample size", "sample size", "min n"],
        zh: &["最小样本量", "样本量"],
        shape: Shape::Count(150, 2000),
    },
    Param {
        en: &["reactivation window", "reactivation"],
        zh: &["召回窗口", "召回"],
        shape: Shape::Days(14, 120),
    },
    Param {
        en: &["refund window", "refund"],
        zh: &["退款期限", "退款"],
        shape: Shape::Days(5, 30),
    },
    Param {
        en: &["Pro seat price", "Pro price", "Pro seat"],
        zh: &["Pro 席位单价", "Pro 单价", "席位单价"],
        shape: Shape::Euro(19, 89),
    },
    Param {
        en: &["support SLA", "SLA"],
        zh: &["客服 SLA", "SLA"],
        shape: Shape::Hours,
    },
    Param {
        en: &["warehouse budget", "compute budget", "budget"],
        zh: &["数仓预算", "预算"],
        shape: Shape::Credits,
    },
    Param {
        en: &["notice period", "notice"],
        zh: &["通知期", "提前通知"],
        shape: Shape::Days(14, 90),
    },
    Param {
        en: &["first cohort", "cohort start"],
        zh: &["起始队列", "首个队列"],
        shape: Shape::Month,
    },
];

/// A choice between options: which one is picked is the value. No option contains another, so
/// a line naming one never also names a second.
pub(super) struct Choice {
    /// Phrases naming what is decided, English; the first is used in prose.
    pub en: &'static [&'static str],
    /// The same in Chinese.
    pub zh: &'static [&'static str],
    /// The options, English.
    pub en_opts: &'static [&'static str],
    /// The options, Chinese.
    pub zh_opts: &'static [&'static str],
}

pub(super) const CHOICES: &[Choice] = &[
    Choice {
        en: &["ARPU"],
        zh: &["ARPU", "人均收入"],
        en_opts: &["median", "average", "trimmed mean"],
        zh_opts: &["中位数", "均值", "截尾平均"],
    },
    Choice {
        en: &["attribution model", "attribution"],
        zh: &["归因模型", "归因"],
        en_opts: &["last-touch", "first-touch", "linear"],
        zh_opts: &["末次触点", "首次触点", "线性分摊"],
    },
    Choice {
        en: &["cohort bucketing", "cohorts", "bucket"],
        zh: &["队列分桶", "分桶", "队列"],
        en_opts: &["signup month", "signup week", "first payment month"],
        zh_opts: &["注册月份", "注册周", "首次付费月份"],
    },
    Choice {
        en: &["FX source", "FX", "exchange rates", "conversion"],
        zh: &["汇率来源", "汇率"],
        en_opts: &[
            "ECB reference rates",
            "Bloomberg close",
            "monthly average rates",
        ],
        zh_opts: &["央行中间价", "彭博收盘价", "月均汇率"],
    },
    Choice {
        en: &["day boundaries", "timezone", "time zone"],
        zh: &["日切时区", "日切", "时区"],
        en_opts: &["Europe/Berlin", "UTC", "America/New_York"],
        zh_opts: &["Asia/Shanghai", "UTC", "Asia/Singapore"],
    },
    Choice {
        en: &["dedupe key", "dedupe", "dedup", "de-dup"],
        zh: &["去重键", "去重"],
        en_opts: &[
            "(account_id, invoice_id)",
            "invoice_number",
            "(account_id, period_start)",
        ],
        zh_opts: &[
            "(account_id, invoice_id)",
            "invoice_number",
            "(account_id, period_start)",
        ],
    },
    Choice {
        en: &["churn date", "churn timestamp"],
        zh: &["流失日期", "流失时间"],
        en_opts: &["cancellation date", "last payment date", "period end"],
        zh_opts: &["取消日期", "最后付款日", "账期结束日"],
    },
    Choice {
        en: &["outliers", "outlier"],
        zh: &["异常值"],
        en_opts: &["winsorize at p99", "clip at p99.5", "log-transform"],
        zh_opts: &["p99 缩尾", "p99.5 截断", "取对数"],
    },
    Choice {
        en: &["deliverable", "output format"],
        zh: &["交付格式", "交付物"],
        en_opts: &["Google Sheet", "PDF", "Notion page"],
        zh_opts: &["飞书表格", "PDF", "Word 文档"],
    },
    Choice {
        en: &["baseline model", "model"],
        zh: &["基线模型", "模型"],
        en_opts: &["logistic regression", "XGBoost", "random forest"],
        zh_opts: &["逻辑回归", "XGBoost", "随机森林"],
    },
    Choice {
        en: &["granularity", "grain"],
        zh: &["统计粒度", "粒度"],
        en_opts: &["weekly", "daily", "monthly"],
        zh_opts: &["按周", "按天", "按月"],
    },
    Choice {
        en: &["missing region", "null region"],
        zh: &["缺失地区", "地区为空"],
        en_opts: &["billing country", "IP geolocation", "an Unknown bucket"],
        zh_opts: &["账单国家", "IP 定位", "单列“未知”"],
    },
    Choice {
        en: &["Legacy tier", "Legacy plan", "Legacy"],
        zh: &["Legacy 档", "Legacy"],
        en_opts: &["Basic", "Pro", "a row of its own"],
        zh_opts: &["基础版", "专业版", "单独一行"],
    },
    Choice {
        en: &["holdout"],
        zh: &["留出集", "holdout"],
        en_opts: &["10%", "20%", "5%"],
        zh_opts: &["10%", "20%", "5%"],
    },
    Choice {
        en: &["retention chart", "chart"],
        zh: &["留存图", "图表"],
        en_opts: &["line chart", "heatmap", "stacked bars"],
        zh_opts: &["折线图", "热力图", "堆叠柱状图"],
    },
];

/// A limit the user sets, with sentences that state it in each language (`{v}` is the value).
pub(super) struct Limit {
    /// Phrases naming what is limited, English.
    pub en: &'static [&'static str],
    /// The same in Chinese.
    pub zh: &'static [&'static str],
    /// Ways of saying it, English.
    pub en_lines: &'static [&'static str],
    /// Ways of saying it, Chinese.
    pub zh_lines: &'static [&'static str],
    /// What the value looks like.
    pub shape: Shape,
}

pub(super) const LIMITS: &[Limit] = &[
    Limit {
        en: &["prod schema", "production schema", "schema"],
        zh: &["生产库", "表结构"],
        en_lines: &[
            "Please don't touch the prod schema before {v}, we're in release freeze.",
            "no DDL on the prod schema until {v}. seriously, Kai will murder us",
            "The production schema is frozen until {v} (change board), so anything you need has to live elsewhere.",
        ],
        zh_lines: &[
            "{v}之前别动生产库的表结构，发布冻结期。",
            "生产库{v}前冻结，任何 DDL 都不要做。",
        ],
        shape: Shape::Weekday,
    },
    Limit {
        en: &["export", "attachment", "file size"],
        zh: &["导出文件", "附件"],
        en_lines: &[
            "The export has to stay under {v}; the mail gateway bounces anything bigger.",
            "keep the attachment below {v} pls, outlook chokes otherwise",
        ],
        zh_lines: &[
            "导出文件不得超过 {v}，邮件网关会直接退信。",
            "附件控制在 {v} 以内，不然邮箱发不出去。",
        ],
        shape: Shape::Megabytes,
    },
    Limit {
        en: &["accounts created", "signed up", "signup date"],
        zh: &["注册的账号", "注册"],
        en_lines: &[
            "Only accounts created on or after {v}, please. Anything older was migrated and its history is junk.",
            "ignore everyone who signed up before {v}, the migration mangled them",
        ],
        zh_lines: &["只统计 {v} 及以后注册的账号，之前的是迁移过来的，历史数据不可靠。"],
        shape: Shape::Date,
    },
    Limit {
        en: &[
            "scanned per query",
            "per query",
            "each query",
            "query budget",
        ],
        zh: &["扫描量", "每条查询"],
        en_lines: &[
            "Keep each query under {v} scanned, we're close to the monthly cap.",
            "no more than {v} per query — finance already asked about last month's bill",
        ],
        zh_lines: &["每条查询的扫描量控制在 {v} 以内，这个月的额度快用完了。"],
        shape: Shape::Gigabytes,
    },
    Limit {
        en: &["data residency", "region", "EU"],
        zh: &["数据不能出境", "区域", "只能跑在"],
        en_lines: &[
            "Everything has to run in {v}; customer data can't leave the EU region.",
            "remember the data residency thing: {v} only, nothing in the US accounts",
        ],
        zh_lines: &[
            "所有任务只能跑在 {v}，数据不能出境。",
            "区域只能用 {v}，合规那边盯得很紧。",
        ],
        shape: Shape::Region,
    },
    Limit {
        en: &["recipients", "send the memo", "distribution"],
        zh: &["发给", "收件人"],
        en_lines: &[
            "Only send the memo to {v} — nobody else until legal has signed off.",
            "distribution is {v} and that's it, don't cc the regional leads yet",
        ],
        zh_lines: &["备忘录只能发给 {v}，法务签字之前不要外发。"],
        shape: Shape::Email,
    },
    Limit {
        en: &["heavy queries", "backfill"],
        zh: &["大查询", "回填"],
        en_lines: &[
            "Heavy queries only between {v}; the BI dashboards hammer the cluster during the day.",
            "if you need a backfill, run it in the {v} window, not during office hours",
        ],
        zh_lines: &["大查询只能在 {v} 之间跑，白天集群要留给报表。"],
        shape: Shape::Window,
    },
    Limit {
        en: &["rounding", "round", "figures in the memo"],
        zh: &["数字统一保留", "保留"],
        en_lines: &[
            "Round everything in the memo to {v}; finance hates false precision.",
            "figures in the memo: {v}, no more",
        ],
        zh_lines: &["备忘录里的数字统一保留{v}，财务不喜欢一堆小数。"],
        shape: Shape::Decimals,
    },
    Limit {
        en: &["appendix"],
        zh: &["附录"],
        en_lines: &[
            "The appendix can't be longer than {v}; it's going onto a single slide.",
            "appendix max {v} or it won't fit on the slide",
        ],
        zh_lines: &["附录不能超过 {v}，要放进一页 PPT。"],
        shape: Shape::Rows,
    },
    Limit {
        en: &["scratch tables", "scratch"],
        zh: &["临时表"],
        en_lines: &[
            "Write scratch tables only to {v}, never to the shared marts.",
            "scratch tables go in {v}. if I see another tmp_ table in marts I'll cry",
        ],
        zh_lines: &["临时表只能建在 {v} 里，别往公共集市里写。"],
        shape: Shape::Schema,
    },
    Limit {
        en: &["queries at a time", "concurrent queries", "in parallel"],
        zh: &["同时跑的查询", "并发"],
        en_lines: &[
            "No more than {v} queries at a time against the replica, ops kills anything beyond that.",
            "max {v} concurrent queries on the replica please",
        ],
        zh_lines: &["对只读副本同时跑的查询不能超过 {v} 个，运维会直接杀掉。"],
        shape: Shape::Count(2, 6),
    },
    Limit {
        en: &["numbers by", "deadline", "deck gets locked"],
        zh: &["截止", "最晚"],
        en_lines: &[
            "I need the numbers by {v} at the latest, the deck gets locked after that.",
            "hard deadline for the numbers: {v}",
        ],
        zh_lines: &[
            "最晚 {v} 前要给我数字，之后 PPT 就锁定了。",
            "截止时间 {v}，过了就进不了这版材料。",
        ],
        shape: Shape::Deadline,
    },
];

/// A requirement the user states loosely and the assistant later plays back with its value.
pub(super) struct Requirement {
    /// How the user puts it, without the value, English.
    pub vague_en: &'static [&'static str],
    /// The same in Chinese.
    pub vague_zh: &'static [&'static str],
    /// The assistant's clause carrying the value (`{v}`), English.
    pub clause_en: &'static str,
    /// The same in Chinese.
    pub clause_zh: &'static str,
    /// The label for a bullet-list playback, English then Chinese.
    pub label: (&'static str, &'static str),
    /// Phrases naming it, English.
    pub en: &'static [&'static str],
    /// Phrases naming it, Chinese.
    pub zh: &'static [&'static str],
    /// What the value looks like.
    pub shape: Shape,
}

pub(super) const REQUIREMENTS: &[Requirement] = &[
    Requirement {
        vague_en: &[
            "money should look the same as in the board pack",
            "same currency as the board deck pls",
        ],
        vague_zh: &["金额跟董事会材料保持一致就行"],
        clause_en: "all amounts are reported in {v} as the currency",
        clause_zh: "报告金额统一用 {v} 作为币种",
        label: ("currency", "币种"),
        en: &["currency", "amounts"],
        zh: &["币种", "金额", "货币"],
        shape: Shape::Currency,
    },
    Requirement {
        vague_en: &[
            "just look at the last full quarter",
            "the usual period, last complete quarter",
        ],
        vague_zh: &["就看上一个完整季度吧"],
        clause_en: "the analysis period is {v}",
        clause_zh: "分析区间为 {v}",
        label: ("period", "分析区间"),
        en: &["analysis period", "period", "date range"],
        zh: &["分析区间", "区间", "时间范围"],
        shape: Shape::Period,
    },
    Requirement {
        vague_en: &[
            "send it to the usual finance crowd",
            "the finance people who always get these",
        ],
        vague_zh: &["老样子发给财务那帮人"],
        clause_en: "the recipient list is {v} only",
        clause_zh: "收件人只有 {v}",
        label: ("recipient", "收件人"),
        en: &["recipient", "send to", "sent to", "goes to"],
        zh: &["收件人", "发给"],
        shape: Shape::Email,
    },
    Requirement {
        vague_en: &[
            "it has to be ready before the finance review",
            "before finance sits down to review it",
        ],
        vague_zh: &["要赶在财务评审之前"],
        clause_en: "the deadline is {v}",
        clause_zh: "截止时间是 {v}",
        label: ("deadline", "截止时间"),
        en: &["deadline", "due"],
        zh: &["截止时间", "截止"],
        shape: Shape::Deadline,
    },
    Requirement {
        vague_en: &[
            "only the big accounts in the appendix",
            "the appendix should just have the whales",
        ],
        vague_zh: &["附录里只放大客户就行"],
        clause_en: "the appendix lists the top {v} accounts by ARR",
        clause_zh: "附录列出 ARR 排名前 {v} 的客户",
        label: ("top accounts by ARR", "ARR 排名前"),
        en: &["top", "accounts by ARR", "largest accounts"],
        zh: &["排名前", "ARR 排名", "大客户"],
        shape: Shape::TopN,
    },
    Requirement {
        vague_en: &[
            "keep the percentages readable, nobody needs six decimals",
            "percentages shouldn't look like a lab report",
        ],
        vague_zh: &["百分比别搞那么多位小数"],
        clause_en: "percentages are rounded to {v}",
        clause_zh: "百分比保留{v}",
        label: ("percentages", "百分比"),
        en: &["percentages", "rounded", "rounding"],
        zh: &["百分比", "保留"],
        shape: Shape::Decimals,
    },
    Requirement {
        vague_en: &[
            "put the file wherever we put the last one, same naming",
            "name it like last quarter's",
        ],
        vague_zh: &["文件名跟上次那份保持一个风格"],
        clause_en: "the file is saved as {v} on the Finance share",
        clause_zh: "文件存为 {v}，放在财务共享盘",
        label: ("file name", "文件名"),
        en: &["saved as", "file name", "filename", "file"],
        zh: &["文件名", "存为", "文件"],
        shape: Shape::FileName,
    },
    Requirement {
        vague_en: &[
            "short, they won't read past page one",
            "keep the memo tight",
        ],
        vague_zh: &["备忘录要短，他们不会看第二页"],
        clause_en: "the memo length stays under {v}",
        clause_zh: "备忘录篇幅控制在 {v} 以内",
        label: ("memo length", "篇幅"),
        en: &["memo length", "length", "memo"],
        zh: &["篇幅", "备忘录"],
        shape: Shape::Words,
    },
    Requirement {
        vague_en: &[
            "no freebies in the numbers",
            "leave the people who never paid out of it",
        ],
        vague_zh: &["没付过钱的那些就别算进来了"],
        clause_en: "accounts on the {v} plan are excluded from every figure",
        clause_zh: "{v}套餐的账号不计入任何指标",
        label: ("excluded plan", "不计入"),
        en: &["excluded", "exclude", "plan"],
        zh: &["不计入", "排除", "套餐"],
        shape: Shape::Plan,
    },
    Requirement {
        vague_en: &[
            "compare against the same time last year, like always",
            "year-over-year like the last memo",
        ],
        vague_zh: &["跟去年同期比就行，和以前一样"],
        clause_en: "the comparison baseline is {v}",
        clause_zh: "对比基准为 {v}",
        label: ("comparison baseline", "对比基准"),
        en: &["comparison baseline", "compared with", "compare against"],
        zh: &["对比基准", "对比"],
        shape: Shape::Quarter,
    },
];
