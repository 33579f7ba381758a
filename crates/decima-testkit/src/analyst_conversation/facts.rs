//! The facts a generated conversation plants: literals the user pastes, the agent restates or a
//! tool prints, decisions and constraints, each in many wordings.

use super::*;

impl Gen {
    /// A literal the user pastes, usually inside a sentence with other chatter.
    pub(super) fn user_literal(&mut self, n: usize) {
        let zh = self.zh;
        let (label, lit, text): (&'static str, String, String) = match n % 16 {
            0 => {
                let v = format!("0.{}", self.rng.u32(6001..9999));
                let t = if zh {
                    format!("更正一下：风险阈值改成{v}了，财务重新跑了模型。")
                } else {
                    format!(
                        "Small correction: the at-risk cut-off moved to {v}, finance re-ran their model."
                    )
                };
                ("decimal", v, t)
            }
            1 => {
                let v = format!(
                    "{}-{}.{}.internal:{}",
                    self.pick(&["pg-analytics", "ch-replica", "warehouse-ro"]),
                    self.rng.u8(1..9),
                    self.pick(&["corp", "dc2", "eu1"]),
                    self.pick(&["6432", "5439", "8123", "9000"])
                );
                let t = if zh {
                    format!("顺便说一下，我们能查的只读副本是 {v}，别的节点权限还没开。")
                } else {
                    format!(
                        "FYI the read replica we can hit is {v}; the other nodes aren't open to us yet."
                    )
                };
                ("host:port", v, t)
            }
            2 => {
                let v = format!(
                    "10.{}.{}.{}:{}",
                    self.rng.u8(0..255),
                    self.rng.u8(0..255),
                    self.rng.u8(1..255),
                    self.rng.u16(1024..65000)
                );
                let t = if zh {
                    format!("VPN 不稳定的话，跳板机地址是{v}。")
                } else {
                    format!("If the VPN acts up, the jump box is at {v}.")
                };
                ("ipv4:port", v, t)
            }
            3 => {
                let v = format!(
                    "2001:db8:{:x}::{:x}",
                    self.rng.u16(0x1000..0xffff),
                    self.rng.u16(1..0xfff)
                );
                let t = if zh {
                    format!("新的采集器只有 IPv6 地址：{v}")
                } else {
                    format!("The new collector only has an IPv6 address: {v}")
                };
                ("ipv6", v, t)
            }
            4 => {
                let v = format!(
                    "{}.{}@{}.example",
                    self.pick(&FIRST),
                    self.pick(&LAST),
                    self.pick(&["northwind", "finance-team", "acme"])
                );
                let t = if zh {
                    format!("套餐映射的问题可以发邮件给 {v}，她负责这块。")
                } else {
                    format!("Questions about the tier mapping go to {v} — she owns it.")
                };
                ("email", v, t)
            }
            5 => {
                let v = self.hex(9);
                let t = if zh {
                    format!("去重的修复昨天合进去了，提交是 {v}。")
                } else {
                    format!("The dedup fix landed yesterday in commit {v}.")
                };
                ("commit", v, t)
            }
            6 => {
                let v = format!(
                    "v{}.{}.{}",
                    self.rng.u8(1..4),
                    self.rng.u8(0..20),
                    self.rng.u8(0..10)
                );
                let t = if zh {
                    format!("提醒一下，导出工具昨晚升级到了 {v}")
                } else {
                    format!("Heads up: the exporter got bumped to {v} last night")
                };
                ("version", v, t)
            }
            7 => {
                let v = format!(
                    "2026-{:02}-{:02} {:02}:{:02} UTC",
                    self.rng.u8(10..13),
                    self.rng.u8(1..29),
                    self.rng.u8(8..19),
                    self.rng.u8(0..60)
                );
                let t = if zh {
                    format!("财务希望在 {v} 拿到备忘录。")
                } else {
                    format!("Finance would like the memo by {v}.")
                };
                ("datetime+zone", v, t)
            }
            8 => {
                let v = format!(
                    "{}-{}",
                    self.pick(&["DATA", "OPS", "FIN"]),
                    self.rng.u16(100..9999)
                );
                let t = if zh {
                    format!("这件事挂在 {v} 下面跟踪吧")
                } else {
                    format!("Track this under {v} please")
                };
                ("ticket", v, t)
            }
            9 => {
                let v = format!("#{}", self.rng.u16(100..9999));
                let t = if zh {
                    format!("相关的缺陷是 {v}，还没人认领。")
                } else {
                    format!("There's a related bug, {v}, nobody has picked it up.")
                };
                ("issue number", v, t)
            }
            10 => {
                let (v, t) = if zh {
                    let v = format!("「Q3流失分析-终版{}」", self.rng.u8(2..9));
                    (v.clone(), format!("表格名称就叫{v}吧。"))
                } else {
                    let v = format!("\"Q3 churn, final v{}\"", self.rng.u8(2..9));
                    (
                        v.clone(),
                        format!("Call the sheet {v} so finance can find it."),
                    )
                };
                ("quoted", v, t)
            }
            11 => {
                let v = format!(
                    "`{}.{}`",
                    self.pick(&["ingest", "export", "scoring"]),
                    self.pick(&["max_batch_rows", "retry_backoff_ms", "window_days"])
                );
                let t = if zh {
                    format!("那个开关是 {v}，现在是 5000。")
                } else {
                    format!("The knob you want is {v}, it's at 5000 right now.")
                };
                ("backticked key", v, t)
            }
            12 => {
                let v = format!("~/reports/q3/churn_draft_v{}.xlsx", self.rng.u8(2..20));
                let t = if zh {
                    format!("我把草稿放在 {v} 了，你看一下。")
                } else {
                    format!("I dropped my draft at {v} if you want to compare.")
                };
                ("home path", v, t)
            }
            13 => {
                let v = format!(
                    "C:\\Users\\{}\\Desktop\\tiers_{}.csv",
                    self.pick(&["mlopez", "wzhang", "tberg"]),
                    self.rng.u16(1..999)
                );
                let t = if zh {
                    format!("旧的档位表在我电脑上：{v}")
                } else {
                    format!("The old tier table is on my laptop: {v}")
                };
                ("windows path", v, t)
            }
            14 => {
                let v = format!(
                    "https://grafana.{}.example/d/churn-q3-{}?orgId={}",
                    self.pick(&["northwind", "acme"]),
                    self.rng.u16(100..999),
                    self.rng.u8(1..9)
                );
                let t = if zh {
                    format!("看板在这里：{v}")
                } else {
                    format!("Dashboard's here: {v}")
                };
                ("https url", v, t)
            }
            _ => {
                let pct = format!("{}.{}%", self.rng.u8(90..100), self.rng.u8(1..10));
                let money = format!(
                    "€{},{:03}.{:02}",
                    self.rng.u8(1..99),
                    self.rng.u16(0..1000),
                    self.rng.u8(0..100)
                );
                let t = if zh {
                    format!("他们的 SLA 是 {pct}，上季度的赔付是 {money}。")
                } else {
                    format!("Their SLA is {pct}, and last quarter's credit came to {money}.")
                };
                self.fact(AnalystFactKind::Literal, "money", &money, true);
                ("percent", pct, t)
            }
        };
        self.fact(AnalystFactKind::Literal, label, &lit, true);
        let text = self.wrap_user(text);
        self.say(Role::User, text);
        let ack = self.ack();
        self.say(Role::Assistant, ack);
    }

    /// A literal the agent states in its own words.
    pub(super) fn assistant_literal(&mut self, n: usize) {
        let zh = self.zh;
        let (label, lit, text): (&'static str, String, String) = match n % 6 {
            0 => {
                let v = format!(
                    "snap-2026{:02}{:02}-{:04}",
                    self.rng.u8(10..13),
                    self.rng.u8(1..29),
                    self.rng.u16(0..2400)
                );
                let t = if zh {
                    format!("我核对了导出清单，快照编号是 {v}，文件数和上周一致。")
                } else {
                    format!(
                        "I checked the export manifest: snapshot {v}, same file count as last week."
                    )
                };
                ("snapshot id", v, t)
            }
            1 => {
                let v = format!(
                    "wh-prod-{:02}.{}.internal:5439",
                    self.rng.u8(1..20),
                    self.pick(&["northwind", "acme"])
                );
                let t = if zh {
                    format!("配置里的数仓地址是 {v}，和你说的副本不是同一台。")
                } else {
                    format!(
                        "The warehouse endpoint in the config is {v}, which is not the replica you mentioned."
                    )
                };
                ("host:port", v, t)
            }
            2 => {
                let v = format!("{}.{} min", self.rng.u8(5..30), self.rng.u8(1..10));
                let t = if zh {
                    format!("中位会话时长降到了 {v}，主要是移动端。")
                } else {
                    format!("Median session length is down to {v}, mostly on mobile.")
                };
                ("number+unit", v, t)
            }
            3 => {
                let v = format!(
                    "2026-10-{:02}T{:02}:{:02}:{:02}Z",
                    self.rng.u8(1..29),
                    self.rng.u8(0..24),
                    self.rng.u8(0..60),
                    self.rng.u8(0..60)
                );
                let t = if zh {
                    format!("最后一次成功的批处理在 {v} 结束。")
                } else {
                    format!("The last good batch finished at {v}.")
                };
                ("iso datetime", v, t)
            }
            4 => {
                let v = format!("/tmp/churn/q3_by_tier_{}.parquet", self.rng.u16(1..999));
                let t = if zh {
                    format!("中间结果写到了 {v}。")
                } else {
                    format!("Intermediate table written to {v}.")
                };
                ("path", v, t)
            }
            _ => {
                let v = format!(
                    "https://lineage.{}.example/graph/{}",
                    self.pick(&["northwind", "acme"]),
                    self.rng.u32(1000..99999)
                );
                let t = if zh {
                    format!("血缘图在 {v}，上游只有两张表。")
                } else {
                    format!("The lineage graph is at {v} and shows only two upstream tables.")
                };
                ("https url", v, t)
            }
        };
        self.fact(AnalystFactKind::Literal, label, &lit, false);
        let extra = self.commentary();
        let text = if zh {
            format!("{text}{extra}")
        } else {
            format!("{text} {extra}")
        };
        self.say(Role::Assistant, text);
        let q = self.chat_line();
        self.say(Role::User, q);
    }

    /// A literal printed by a tool the agent ran once.
    pub(super) fn tool_literal(&mut self, n: usize) {
        let (label, lit, name, args, output) = match n % 4 {
            0 => {
                let v = format!("{}{}", self.hex(10), self.hex(30));
                (
                    "commit",
                    v.clone(),
                    "shell",
                    serde_json::json!({ "command": "git -C /srv/etl log -1 --format='%H %ci'" }),
                    format!("{v} 2026-10-28 09:12:44 +0200\n"),
                )
            }
            1 => {
                let v = format!(
                    "kafka-{}.{}.internal:9092",
                    self.rng.u8(1..6),
                    self.pick(&["northwind", "acme"])
                );
                (
                    "host:port",
                    v.clone(),
                    "read_file",
                    serde_json::json!({ "path": "/srv/etl/config/ingest.yaml" }),
                    format!(
                        "ingest:\n  batch_rows: 5000\n  retries: 4\nsource:\n  brokers: {v}\n  topic: subs.events.v3\n"
                    ),
                )
            }
            2 => {
                let v = format!("3.{}.{}", self.rng.u8(9..13), self.rng.u8(0..20));
                (
                    "version",
                    v.clone(),
                    "shell",
                    serde_json::json!({ "command": "python3 --version" }),
                    format!("Python {v}\n"),
                )
            }
            _ => {
                let v = format!(
                    "{}.{}.{}-rc.{}",
                    self.rng.u8(1..3),
                    self.rng.u8(0..12),
                    self.rng.u8(0..9),
                    self.rng.u8(1..5)
                );
                (
                    "semver rc",
                    v.clone(),
                    "shell",
                    serde_json::json!({ "command": "curl -s http://scoring.internal/healthz" }),
                    format!("{{\"status\":\"ok\",\"build\":\"{v}\",\"uptime_s\":81234}}\n"),
                )
            }
        };
        let lead = if self.zh {
            "先看一下环境。".to_string()
        } else {
            "Let me look at the environment first.".to_string()
        };
        let result_pos = self.pos() + 1;
        self.tool(name, args, output, lead);
        self.facts.push(AnalystFact {
            kind: AnalystFactKind::Literal,
            label,
            text: lit,
            by_user: false,
            position: result_pos,
        });
    }

    pub(super) fn decision(&mut self, n: usize) {
        let k = self.rng.u8(2..9);
        let days = self.rng.u8(30..120);
        let accounts = self.rng.u16(100..900);
        // (speaker is user, full sentence, key phrase)
        let (user, text, key): (bool, String, String) = if self.zh {
            match n % 8 {
                0 => (
                    true,
                    format!("用户确认选择方案{k}（而非方案{}）。", k + 1),
                    format!("用户确认选择方案{k}（而非方案{}）", k + 1),
                ),
                1 => (
                    true,
                    format!("行，那就按注册月份分桶，第{k}周的数据单独标出来。"),
                    "那就按注册月份分桶".into(),
                ),
                2 => (
                    true,
                    format!("就用中位数吧，均值被那{accounts}个大客户拉偏了。"),
                    format!("就用中位数吧，均值被那{accounts}个大客户拉偏了"),
                ),
                3 => (
                    false,
                    format!("我把{days}天内的退款也算作流失，这是我们之前商量好的口径。"),
                    format!("我把{days}天内的退款也算作流失"),
                ),
                4 => (
                    true,
                    format!("同意，把 Legacy 档合并进 Basic{k} 档。"),
                    format!("把 Legacy 档合并进 Basic{k} 档"),
                ),
                5 => (
                    false,
                    format!("后面统一以账本时间戳为准，不再用 App 上报的时间（第{k}版口径）。"),
                    "统一以账本时间戳为准".into(),
                ),
                6 => (
                    true,
                    format!("改用{days}天窗口。"),
                    format!("改用{days}天窗口"),
                ),
                _ => (
                    false,
                    format!("已采用左连接，{accounts}条未匹配的订阅也保留下来了。"),
                    format!("已采用左连接，{accounts}条未匹配的订阅也保留下来了"),
                ),
            }
        } else {
            match n % 8 {
                0 => (
                    true,
                    format!("OK, we'll bucket by signup month and flag week {k} separately."),
                    "we'll bucket by signup month".into(),
                ),
                1 => (
                    true,
                    format!(
                        "Fine, go with the median — the mean is dragged around by those {accounts} enterprise accounts."
                    ),
                    "go with the median".into(),
                ),
                2 => (
                    true,
                    format!("Let's use the {days}-day window instead of 60."),
                    format!("{days}-day window instead of 60"),
                ),
                3 => (
                    false,
                    format!(
                        "I'll count refunds within {days} days as churn, as we agreed on Tuesday."
                    ),
                    format!("count refunds within {days} days as churn"),
                ),
                4 => (
                    true,
                    format!("Agreed, fold the Legacy tier into Basic-{k}."),
                    format!("fold the Legacy tier into Basic-{k}"),
                ),
                5 => (
                    false,
                    format!(
                        "Going forward I'm using the ledger timestamps rather than the app's (rule {k})."
                    ),
                    "ledger timestamps rather than the app's".into(),
                ),
                6 => (
                    true,
                    format!("Approved — drop the {accounts} trial accounts from the denominator."),
                    format!("drop the {accounts} trial accounts from the denominator"),
                ),
                _ => (
                    false,
                    format!(
                        "I switched the join to a LEFT JOIN so the {accounts} unmatched subscriptions stay visible."
                    ),
                    format!("switched the join to a LEFT JOIN so the {accounts} unmatched"),
                ),
            }
        };
        let role = if user { Role::User } else { Role::Assistant };
        self.fact(AnalystFactKind::Decision, "decision", &key, user);
        let text = if user {
            self.wrap_user(text)
        } else {
            let extra = self.commentary();
            if self.zh {
                format!("{extra}{text}")
            } else {
                format!("{extra} {text}")
            }
        };
        self.say(role, text);
        if user {
            let ack = self.ack();
            self.say(Role::Assistant, ack);
        } else {
            let q = self.chat_line();
            self.say(Role::User, q);
        }
    }

    pub(super) fn constraint(&mut self, n: usize) {
        let day = self.pick(&["Friday", "Thursday", "Monday"]);
        let mb = self.rng.u8(10..90);
        let year = self.rng.u16(2019..2024);
        let (text, key): (String, String) = if self.zh {
            match n % 8 {
                0 => (
                    "周五之前别动生产库的表结构。".into(),
                    "周五之前别动生产库的表结构".into(),
                ),
                1 => (
                    format!("只用 {year} 年以后注册的账号。"),
                    format!("只用 {year} 年以后注册的账号"),
                ),
                2 => (
                    "原始导出文件禁止发到分析组以外。".into(),
                    "原始导出文件禁止发到分析组以外".into(),
                ),
                3 => (
                    "备忘录里不需要图表，财务都是在手机上看的。".into(),
                    "备忘录里不需要图表".into(),
                ),
                4 => (
                    format!("报告里不要出现第{mb}号门店的名字。"),
                    format!("报告里不要出现第{mb}号门店的名字"),
                ),
                5 => (
                    format!("导出文件不得超过 {mb} MB。"),
                    format!("导出文件不得超过 {mb} MB"),
                ),
                6 => (
                    format!("{year} 年的用户群先不用管。"),
                    format!("{year} 年的用户群先不用管"),
                ),
                _ => (
                    format!("必须用欧盟区的节点跑，数据不能出欧盟（第{mb}条合规要求）。"),
                    "必须用欧盟区的节点跑".into(),
                ),
            }
        } else {
            match n % 8 {
                0 => (
                    format!("Please don't touch the prod schema before {day}."),
                    format!("don't touch the prod schema before {day}"),
                ),
                1 => (
                    format!("Only use accounts created after {year}-01-01."),
                    format!("Only use accounts created after {year}-01-01"),
                ),
                2 => (
                    "Never send the raw export outside the analytics group.".into(),
                    "Never send the raw export outside the analytics group".into(),
                ),
                3 => (
                    "No charts in the memo; finance reads it on their phones.".into(),
                    "No charts in the memo".into(),
                ),
                4 => (
                    format!("The export has to stay under {mb} MB."),
                    format!("export has to stay under {mb} MB"),
                ),
                5 => (
                    format!("Leave the {year} cohort out of it for now."),
                    format!("Leave the {year} cohort out of it"),
                ),
                6 => (
                    "Stay away from the customer_pii table, legal hasn't signed off.".into(),
                    "Stay away from the customer_pii table".into(),
                ),
                _ => (
                    format!(
                        "You must run this on the EU nodes, data can't leave the EU (policy {mb})."
                    ),
                    "You must run this on the EU nodes".into(),
                ),
            }
        };
        self.fact(AnalystFactKind::Constraint, "constraint", &key, true);
        let text = self.wrap_user(text);
        self.say(Role::User, text);
        let ack = self.ack();
        self.say(Role::Assistant, ack);
    }
}
