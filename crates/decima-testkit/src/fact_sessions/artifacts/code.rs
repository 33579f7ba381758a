//! A value inside a code block: a config key, a SQL threshold, a Python constant.

use decima_core::Role;
use serde_json::json;

use super::super::FactKind;
use super::super::generator::Gen;

impl Gen {
    /// A value in a config file the agent reads, or in code the agent writes and runs.
    pub(in crate::fact_sessions) fn code_value(&mut self) -> bool {
        let Some(i) = self.codes.pop() else {
            return false;
        };
        let zh = self.zh;
        let r = &mut self.rng;
        // (tool, its arguments, code shown in the assistant's message or printed by the tool,
        //  whether the assistant wrote it, subject en, subject zh, value)
        let (tool, args, code, written, en, zh_subject, v): (
            &str,
            serde_json::Value,
            String,
            bool,
            &[&str],
            &[&str],
            String,
        ) = match i {
            0 => {
                let v = (r.u32(4..19) * 10).to_string();
                let code = format!(
                    "# churn scoring config — owned by data-platform, see DATA-{}\nscoring:\n  model: churn-xgb\n  lookback_days: {v}\n  min_active_days: {}\n  calibrate: true\nexport:\n  format: parquet\n  compression: zstd\n",
                    r.u32(1000..3000),
                    r.u32(3..20)
                );
                (
                    "read_file",
                    json!({"path": "/srv/etl/churn/config/scoring.yaml"}),
                    code,
                    false,
                    &["lookback_days", "lookback"][..],
                    &["lookback_days", "回看天数", "回看窗口"][..],
                    v,
                )
            }
            1 => {
                let v = format!("{}.00", r.u32(19..100));
                let code = format!(
                    "SELECT s.account_id, s.plan_tier, s.region, s.mrr_eur\nFROM marts.subscriptions s\nJOIN marts.accounts a USING (account_id)\nWHERE s.mrr_eur >= {v}\n  AND s.plan_tier <> 'free'\n  AND a.is_internal = false;"
                );
                (
                    "run_sql",
                    json!({"query": code}),
                    format!("```sql\n{code}\n```"),
                    true,
                    &["mrr_eur", "MRR"][..],
                    &["mrr_eur", "MRR", "月费"][..],
                    v,
                )
            }
            2 => {
                let v = r.u32(2..10).to_string();
                let comment = if zh {
                    "# 活跃度阈值（和产品对齐过，见 DATA-2291）"
                } else {
                    "# engagement thresholds (agreed with product, see DATA-2291)"
                };
                let code = format!(
                    "{comment}\nMIN_SESSIONS_PER_WEEK = {v}\nLOOKAHEAD_WEEKS = 4\n\ndef is_engaged(weekly_sessions: list[int]) -> bool:\n    recent = weekly_sessions[-LOOKAHEAD_WEEKS:]\n    return sum(recent) >= MIN_SESSIONS_PER_WEEK * LOOKAHEAD_WEEKS"
                );
                (
                    "python",
                    json!({"code": code}),
                    format!("```python\n{code}\n```"),
                    true,
                    &["MIN_SESSIONS_PER_WEEK", "sessions per week"][..],
                    &["MIN_SESSIONS_PER_WEEK", "每周最少会话", "每周会话"][..],
                    v,
                )
            }
            3 => {
                let v = ["0.05", "0.08", "0.125", "0.2", "0.25", "0.3"][r.usize(0..6)].to_string();
                let code = format!(
                    "[sampling]\nsample_fraction = {v}\nseed = 20260930\nstratify_by = [\"plan_tier\", \"region\"]\n\n[output]\npath = \"/data/samples/q3\"\n"
                );
                (
                    "read_file",
                    json!({"path": "/srv/etl/churn/settings.toml"}),
                    code,
                    false,
                    &["sample_fraction", "sample fraction", "sampling fraction"][..],
                    &["sample_fraction", "抽样比例"][..],
                    v,
                )
            }
            4 => {
                let v = format!("{} {} * * {}", r.u32(0..12) * 5, r.u32(4..8), r.u32(1..6));
                let code = format!(
                    "# m h dom mon dow  command\n*/15 * * * * /opt/etl/poll_exports.sh >> /var/log/etl/poll.log 2>&1\n{v} /opt/etl/run_weekly_churn.sh >> /var/log/etl/weekly.log 2>&1\n0 2 1 * * /opt/etl/monthly_rollup.sh\n"
                );
                (
                    "shell",
                    json!({"command": "crontab -l"}),
                    code,
                    false,
                    &["run_weekly_churn", "weekly churn job", "weekly job"][..],
                    &["run_weekly_churn", "周度流失任务", "每周任务"][..],
                    v,
                )
            }
            5 => {
                let v = (r.u32(2..11) * 50_000).to_string();
                let code = format!(
                    "EXPORT_BUCKET=s3://northwind-analytics-exports\nEXPORT_FORMAT=parquet\nEXPORT_MAX_ROWS={v}\nEXPORT_TIMEOUT_S={}\n",
                    r.u32(3..20) * 60
                );
                (
                    "shell",
                    json!({"command": "grep ^EXPORT_ /srv/etl/.env"}),
                    code,
                    false,
                    &["EXPORT_MAX_ROWS", "max rows", "export row limit"][..],
                    &["EXPORT_MAX_ROWS", "导出行数上限", "最大行数"][..],
                    v,
                )
            }
            6 => {
                let v = r.u32(3..13).to_string();
                let code = format!(
                    "{{\n  \"source\": \"postgres://replica-2.eu1.internal:6432/billing\",\n  \"batch_size\": 50000,\n  \"max_retries\": {v},\n  \"backoff_s\": [1, 4, 16],\n  \"tables\": [\"subscriptions\", \"invoices\", \"accounts\"]\n}}\n"
                );
                (
                    "read_file",
                    json!({"path": "/srv/etl/loader/config.json"}),
                    code,
                    false,
                    &["max_retries", "retries", "retry limit"][..],
                    &["max_retries", "重试次数", "最大重试"][..],
                    v,
                )
            }
            7 => {
                let v = r.u32(14..61).to_string();
                let comment = if zh {
                    "# 流失标签的观察期（天）：快照之后多久内取消算流失"
                } else {
                    "# label horizon: how long after the snapshot a cancellation still counts"
                };
                let code = format!(
                    "{comment}\nCHURN_LABEL_HORIZON_DAYS = {v}\nsnapshot = pd.Timestamp(\"2026-09-30\")\nlabel_end = snapshot + pd.Timedelta(days=CHURN_LABEL_HORIZON_DAYS)\nlabels = build_labels(df, snapshot, label_end)"
                );
                (
                    "python",
                    json!({"code": code}),
                    format!("```python\n{code}\n```"),
                    true,
                    &["CHURN_LABEL_HORIZON_DAYS", "label horizon"][..],
                    &["CHURN_LABEL_HORIZON_DAYS", "标签观察期", "观察期"][..],
                    v,
                )
            }
            8 => {
                let v = format!("{} days", r.u32(7..46));
                let code = format!(
                    "SELECT account_id, count(*) AS events\nFROM raw.product_events e\nWHERE e.event_ts >= now() - interval '{v}'\nGROUP BY account_id;"
                );
                (
                    "run_sql",
                    json!({"query": code}),
                    format!("```sql\n{code}\n```"),
                    true,
                    &["event_ts", "event lookback", "recent events"][..],
                    &["event_ts", "事件回看", "近期事件"][..],
                    v,
                )
            }
            _ => {
                let v = (r.u32(2..13) * 100).to_string();
                let code = format!(
                    "spark.executor.memory            {}g\nspark.executor.cores             {}\nspark.sql.shuffle.partitions     {v}\nspark.sql.adaptive.enabled       true\n",
                    r.u32(4..17),
                    r.u32(2..9)
                );
                (
                    "shell",
                    json!({"command": "cat /opt/spark/conf/spark-defaults.conf"}),
                    code,
                    false,
                    &[
                        "spark.sql.shuffle.partitions",
                        "shuffle.partitions",
                        "shuffle partitions",
                    ][..],
                    &["spark.sql.shuffle.partitions", "shuffle 分区数", "分区数"][..],
                    v,
                )
            }
        };
        let pos = if written {
            let before = if zh {
                self.pick(&[
                    "我用下面这段来算：",
                    "改了一下逻辑，先跑这个版本：",
                    "这一步的代码如下。",
                ])
            } else {
                self.pick(&[
                    "Here's what I'm running for this step:",
                    "Updated logic, running this version:",
                    "The code for this part:",
                ])
            };
            let content = format!("{before}\n\n{code}");
            let out = if tool == "run_sql" {
                format!(
                    "SELECT {}\nTime: {}.{:03} ms\n",
                    self.rng.u32(1000..90_000),
                    self.rng.u32(100..9000),
                    self.rng.u32(0..1000)
                )
            } else {
                String::new()
            };
            let result = self.tool(tool, args, out, content);
            result - 1
        } else {
            let lead = self.lead();
            self.tool(tool, args, code, lead)
        };
        let by = if written { Role::Assistant } else { Role::Tool };
        self.fact_lang(FactKind::CodeValue, en, zh_subject, &v, by, pos);
        self.after_result();
        true
    }
}
