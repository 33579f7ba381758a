//! What fills a long session between the facts: polled logs, counts, previews, stack traces,
//! listings, long reasoning and chit-chat — full of numbers that are not facts.

use decima_core::Role;
use serde_json::json;

use super::artifacts::thousands;
use super::generator::Gen;

/// A running clock and counters, so polled output moves forward like a real job's.
pub(super) struct NoiseState {
    /// Seconds since 2026-10-05 00:00:00 UTC.
    secs: u64,
    part: u32,
    batch: u32,
    batches: u32,
    errors: u32,
    staged: u64,
}

impl NoiseState {
    pub fn new(rng: &mut fastrand::Rng) -> Self {
        Self {
            secs: 8 * 3600 + rng.u64(0..3600),
            part: 0,
            batch: rng.u32(100..900),
            batches: 4096,
            errors: rng.u32(3..40),
            staged: rng.u64(1_000_000..9_000_000),
        }
    }

    fn tick(&mut self, rng: &mut fastrand::Rng) {
        self.secs += rng.u64(4..45);
    }

    /// `2026-10-05T08:12:03Z`.
    fn iso(&self) -> String {
        let (y, mo, d) = civil(self.secs / 86_400);
        let t = self.secs % 86_400;
        format!(
            "{y}-{mo:02}-{d:02}T{:02}:{:02}:{:02}Z",
            t / 3600,
            t % 3600 / 60,
            t % 60
        )
    }

    /// `2026-10-05 08:12:03,481`, as Python's logging prints it.
    fn pylog(&self, millis: u32) -> String {
        let (y, mo, d) = civil(self.secs / 86_400);
        let t = self.secs % 86_400;
        format!(
            "{y}-{mo:02}-{d:02} {:02}:{:02}:{:02},{millis:03}",
            t / 3600,
            t % 3600 / 60,
            t % 60
        )
    }
}

/// The calendar date `days` after 2026-10-05.
fn civil(days: u64) -> (u64, u64, u64) {
    const MONTHS: [u64; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let (mut y, mut m, mut d) = (2026u64, 10u64, 5 + days);
    loop {
        let len = MONTHS[(m - 1) as usize] + u64::from(m == 2 && y % 4 == 0);
        if d <= len {
            return (y, m, d);
        }
        d -= len;
        m += 1;
        if m > 12 {
            m = 1;
            y += 1;
        }
    }
}

impl Gen {
    /// One to two messages of background work or talk, never more than `remaining`.
    pub(super) fn noise(&mut self, remaining: usize) {
        self.noise.tick(&mut self.rng);
        if remaining < 2 {
            if self.rng.bool() {
                let t = self.chat_line();
                self.say(Role::User, t);
            } else {
                let n = self.rng.usize(2..5);
                let t = self.prose(n);
                self.say(Role::Assistant, t);
            }
            return;
        }
        match self.rng.u8(0..20) {
            0..=13 => self.noise_tool(),
            14 | 15 => {
                let n = self.rng.usize(3..8);
                let t = self.prose(n);
                self.say(Role::Assistant, t);
            }
            16 | 17 => {
                let t = self.chat_line();
                self.say(Role::User, t);
                let n = self.rng.usize(1..3);
                let a = self.prose(n);
                self.say(Role::Assistant, a);
            }
            _ => {
                let t = self.chat_line();
                self.say(Role::User, t);
            }
        }
    }

    /// A tool call and its noisy result.
    pub(super) fn noise_tool(&mut self) {
        let lead = self.lead();
        let r = &mut self.rng;
        let st = &mut self.noise;
        let (name, args, out) = match r.u8(0..19) {
            0..=2 => {
                let mut out = String::new();
                for _ in 0..r.usize(4..9) {
                    st.secs += r.u64(1..9);
                    st.batch = (st.batch + 1).min(st.batches);
                    out.push_str(&format!(
                        "[{}] {{taskinstance.py:{}}} INFO - Dumping batch {}/{} (rows={}, elapsed={}.{}s)\n",
                        st.iso(),
                        r.u32(1100..1400),
                        st.batch,
                        st.batches,
                        r.u32(40_000..50_001),
                        r.u32(3..30),
                        r.u32(0..10)
                    ));
                }
                if r.u8(0..4) == 0 {
                    out.push_str(&format!(
                        "[{}] {{connection.py:{}}} WARNING - retrying after timeout ({} / 5)\n",
                        st.iso(),
                        r.u32(80..400),
                        r.u32(1..5)
                    ));
                }
                (
                    "shell",
                    json!({ "command": "tail -n 8 /opt/airflow/logs/churn_snapshot/load_subscriptions/latest.log" }),
                    out,
                )
            }
            3 | 4 => {
                st.errors += r.u32(0..3);
                (
                    "shell",
                    json!({ "command": "grep -c ERROR /var/log/etl/worker.log" }),
                    format!("{}\n", st.errors),
                )
            }
            5 | 6 => {
                st.part += 1;
                let path = format!("/data/exports/q3/part-{:05}.csv.gz", st.part);
                (
                    "shell",
                    json!({ "command": format!("zcat {path} | wc -l") }),
                    format!("{}\n", r.u32(48_000..52_000)),
                )
            }
            7 => {
                let mut out = String::from("event_id,account_id,event_type,ts,amount_cents\n");
                for _ in 0..5 {
                    st.secs += r.u64(0..4);
                    out.push_str(&format!(
                        "{},{},{},{},{}\n",
                        r.u64(10_000_000..99_999_999),
                        r.u32(10_000..99_999),
                        [
                            "login",
                            "invoice_paid",
                            "seat_added",
                            "export",
                            "plan_changed"
                        ][r.usize(0..5)],
                        st.iso(),
                        r.u32(0..25_000)
                    ));
                }
                (
                    "shell",
                    json!({ "command": format!("head -6 /data/raw/events/dt=2026-09-{:02}/events.csv", r.u32(1..31)) }),
                    out,
                )
            }
            8 => {
                let line = r.u32(40..400);
                let key = ["region_code", "plan_tier", "seats", "currency"][r.usize(0..4)];
                (
                    "python",
                    json!({ "code": "df = load_snapshot('2026-09-30')\nsummary = build_summary(df)" }),
                    format!(
                        "{} ERROR churn.summary: build_summary failed\nTraceback (most recent call last):\n  File \"/srv/etl/churn/summary.py\", line {line}, in build_summary\n    grouped = df.groupby([\"{key}\", \"region\"]).agg(AGGS)\n  File \"/usr/local/lib/python3.11/site-packages/pandas/core/frame.py\", line {}, in groupby\n    return DataFrameGroupBy(\n  File \"/usr/local/lib/python3.11/site-packages/pandas/core/groupby/grouper.py\", line {}, in get_grouper\n    raise KeyError(gpr)\nKeyError: '{key}'\n",
                        st.pylog(r.u32(0..1000)),
                        r.u32(8000..9300),
                        r.u32(900..1100)
                    ),
                )
            }
            9 => (
                "shell",
                json!({ "command": "spark-submit --master yarn jobs/rollup.py --date 2026-09-30" }),
                format!(
                    "{} WARN TaskSetManager: Lost task {}.0 in stage {}.0 (TID {}) (ip-10-0-{}-{}.ec2.internal executor {}): java.lang.OutOfMemoryError: Java heap space\n\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)\n\tat org.apache.spark.sql.catalyst.expressions.UnsafeRow.copy(UnsafeRow.java:{})\n\tat org.apache.spark.sql.execution.SparkPlan.$anonfun$getByteArrayRdd$1(SparkPlan.scala:{})\n{} INFO DAGScheduler: Resubmitting failed stages\n",
                    st.iso(),
                    r.u32(0..400),
                    r.u32(2..30),
                    r.u32(1000..90_000),
                    r.u32(0..255),
                    r.u32(0..255),
                    r.u32(1..40),
                    r.u32(400..600),
                    r.u32(350..420),
                    st.iso()
                ),
            ),
            10 => {
                let mut out = format!("total {}M\n", r.u32(200..900));
                for i in 0..r.usize(3..7) {
                    out.push_str(&format!(
                        "-rw-r--r-- 1 etl etl {:>4}M Oct {:>2} {:02}:{:02} part-{:05}.csv.gz\n",
                        r.u32(40..140),
                        r.u32(1..28),
                        r.u32(0..24),
                        r.u32(0..60),
                        st.part as usize + i
                    ));
                }
                (
                    "shell",
                    json!({ "command": "ls -lh /data/exports/q3/ | head" }),
                    out,
                )
            }
            11 => {
                st.staged += r.u64(0..40_000);
                (
                    "run_sql",
                    json!({ "query": "SELECT count(*) FROM staging.subscription_events WHERE loaded_at > now() - interval '1 hour';" }),
                    format!("  count\n---------\n {}\n(1 row)\n", st.staged),
                )
            }
            12 => {
                let mut out = String::new();
                for msg in [
                    "fix: cast seats to int before the join",
                    "wip churn memo",
                    "dedupe invoices on the natural key",
                    "bump pandas",
                    "rollup: handle empty partitions",
                ]
                .iter()
                .take(r.usize(3..6))
                {
                    out.push_str(&format!("{:07x} {msg}\n", r.u32(0x100_0000..0xfff_ffff)));
                }
                ("shell", json!({ "command": "git log --oneline -5" }), out)
            }
            13 => {
                let used = r.u32(300..800);
                (
                    "shell",
                    json!({ "command": "df -h /data" }),
                    format!(
                        "Filesystem      Size  Used Avail Use% Mounted on\n/dev/nvme1n1    1.0T  {used}G  {}G  {}% /data\n",
                        1000 - used,
                        used / 10
                    ),
                )
            }
            14 => (
                "shell",
                json!({ "command": "python -m pytest tests/ -q" }),
                format!(
                    "{}\n{} passed, {} warnings in {}.{:02}s\n",
                    ".".repeat(r.usize(20..70)),
                    r.u32(40..160),
                    r.u32(0..12),
                    r.u32(3..40),
                    r.u32(0..100)
                ),
            ),
            15 => (
                "shell",
                json!({ "command": "curl -s http://airflow.internal:8080/health" }),
                format!(
                    "{{\"metadatabase\":{{\"status\":\"healthy\"}},\"scheduler\":{{\"latest_scheduler_heartbeat\":\"{}\",\"status\":\"healthy\"}},\"queued_tasks\":{}}}\n",
                    st.iso(),
                    r.u32(0..40)
                ),
            ),
            17 => (
                "read_file",
                json!({ "path": "/srv/etl/churn/queries/cohorts.sql" }),
                format!(
                    "-- cohorts: one row per account, month of first paid invoice\n-- last touched {}\nWITH first_paid AS (\n  SELECT account_id, date_trunc('month', min(paid_at)) AS cohort\n  FROM marts.invoices\n  WHERE status = 'paid'\n  GROUP BY 1\n)\nSELECT f.cohort, a.account_id, a.plan_tier, a.region\nFROM first_paid f\nJOIN marts.accounts a USING (account_id);\n",
                    st.iso()
                ),
            ),
            18 => {
                let bytes = r.u32(2_000..12_000);
                (
                    "write_file",
                    json!({ "path": "/srv/etl/churn/out/memo_draft.md", "content": "# Q3 churn\n\n(draft, numbers pending)\n" }),
                    format!(
                        "wrote {} bytes to /srv/etl/churn/out/memo_draft.md\n",
                        thousands(u64::from(bytes))
                    ),
                )
            }
            _ => (
                "python",
                json!({ "code": "import pandas as pd\ndf = pd.read_parquet('/data/clean/subscriptions.parquet')\nprint(df.shape)\nprint(df.dtypes.value_counts())" }),
                format!(
                    "({}, {})\nfloat64    {}\nobject     {}\nint64      {}\ndtype: int64\n",
                    r.u32(400_000..500_000),
                    r.u32(20..40),
                    r.u32(5..15),
                    r.u32(4..10),
                    r.u32(3..8)
                ),
            ),
        };
        self.tool(name, args, out, lead);
    }

    /// `n` sentences of the assistant thinking aloud, numbers included (none of them a fact).
    pub(super) fn prose(&mut self, n: usize) -> String {
        let mut out = String::new();
        let mut order: Vec<u8> = (0..12).collect();
        self.rng.shuffle(&mut order);
        for (i, &pick) in order.iter().cycle().take(n).enumerate() {
            let r = &mut self.rng;
            let (a, b, c) = (r.u32(100..5000), r.u32(5000..60_000), r.u32(2..90));
            let p1 = r.u32(20..90);
            let p2 = p1 + r.u32(0..7) - 3;
            let (p1, p2) = (
                format!("{}.{}", p1 / 10, p1 % 10),
                format!("{}.{}", p2 / 10, p2 % 10),
            );
            let pct = r.u32(10..60);
            let s = if self.zh {
                match pick {
                    0 => format!(
                        "八月的下滑主要集中在自助购买档位：{b} 次取消里有 {a} 次来自单席位账号。"
                    ),
                    1 => format!(
                        "我逐行比对了两份提数，有 {a} 行不一致，其中除了 {c} 行以外都只是 updated_at 不同。"
                    ),
                    2 => format!(
                        "如果排除三月迁移过来的 {a} 个账号，环比变化从 {p1}% 变成 {p2}%，在正常波动范围内。"
                    ),
                    3 => format!(
                        "留存账号每周的会话中位数是 {c}，流失账号只有 {}，活跃度的预测力很明显。",
                        c / 3
                    ),
                    4 => format!("有 {a} 张金额为负的发票，都是红冲，不是错误，所以我保留了。"),
                    5 => "下结论之前我先把总数和财务的提数对一遍。".to_string(),
                    6 => "我目前的假设是涨价让一部分取消提前发生了，而不是凭空多出了取消。"
                        .to_string(),
                    7 => format!("大约 {pct}% 的流失账号在最后阶段有未关闭的工单。"),
                    8 => format!("加载任务夜里重试了 {c} 次，这解释了为什么有几个分区到得晚。"),
                    9 => format!("第 {a} 批耗时 {c} 秒，是平时的两倍，可能是同时在做 vacuum。"),
                    10 => "日志里没有数据丢失的迹象，缺口和维护时间对得上。".to_string(),
                    _ => format!(
                        "席位数和在网时间的相关性很弱（r = 0.{:02}），所以我不拿席位当代理变量。",
                        r.u32(1..30)
                    ),
                }
            } else {
                match pick {
                    0 => format!("The August dip sits mostly in the self-serve tier: {a} of the {b} cancellations came from single-seat accounts."),
                    1 => format!("I diffed the two extracts row by row; {a} rows differ, and all but {c} of those differ only in updated_at."),
                    2 => format!("If I exclude the {a} accounts migrated in March, the month-over-month change goes from {p1}% to {p2}%, which is inside the usual noise."),
                    3 => format!("Median weekly sessions are {c} for retained accounts against {} for churned ones, so engagement is clearly predictive.", c / 3),
                    4 => format!("There are {a} invoices with a negative amount; they are credit notes, not errors, so I'm leaving them in."),
                    5 => "Before drawing conclusions I want to reconcile the totals with the finance extract.".to_string(),
                    6 => "My working hypothesis is that the price change pulled some cancellations forward rather than creating new ones.".to_string(),
                    7 => format!("Roughly {pct}% of churned accounts had a support ticket still open at the end."),
                    8 => format!("The loader retried {c} times overnight, which explains the late partitions."),
                    9 => format!("Batch {a} took {c}s, about twice the usual, probably because vacuum was running at the same time."),
                    10 => "Nothing in the logs suggests data loss; the gaps line up with the maintenance slot.".to_string(),
                    _ => format!("The correlation between seats and age of account is weak (r = 0.{:02}), so I won't use seats as a proxy.", r.u32(1..30)),
                }
            };
            if i > 0 {
                if self.rng.u8(0..4) == 0 {
                    out.push_str("\n\n");
                } else if !self.zh {
                    out.push(' ');
                }
            }
            out.push_str(&s);
        }
        out
    }
}
