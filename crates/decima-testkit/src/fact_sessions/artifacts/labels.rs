//! A value printed next to its label by a tool: the label is what the value is.

use decima_core::Role;
use serde_json::json;

use super::super::FactKind;
use super::super::generator::Gen;

use super::thousands;

impl Gen {
    pub(in crate::fact_sessions) fn tool_label(&mut self) -> bool {
        let Some(i) = self.labels.pop() else {
            return false;
        };
        let zh = self.zh;
        let r = &mut self.rng;
        let (name, args, out, en, zh_subject, value): (
            &str,
            serde_json::Value,
            String,
            &[&str],
            &[&str],
            String,
        ) = match i {
            0 => {
                let rows_in = r.u64(300_000..600_000);
                let dropped = r.u64(200..9000);
                let v = dropped.to_string();
                let out = format!(
                    "[dedupe] reading s3://northwind-analytics-raw/subs/2026-q3/ ({} parts)\n[dedupe] rows_in: {rows_in}\n[dedupe] duplicate key: (account_id, invoice_id)\n[dedupe] rows_dropped: {dropped}\n[dedupe] rows_out: {}\n[dedupe] done in {}.{}s\n",
                    r.u32(200..900),
                    rows_in - dropped,
                    r.u32(20..90),
                    r.u32(0..10)
                );
                (
                    "shell",
                    json!({"command": "python jobs/dedupe_invoices.py --since 2026-07-01"}),
                    out,
                    &["rows_dropped", "rows dropped", "dropped rows", "dropped"][..],
                    &["rows_dropped", "删除的行", "去重删掉", "丢弃"][..],
                    v,
                )
            }
            1 => {
                let subs = r.u64(200_000_000..500_000_000);
                let services = r.u64(30_000_000..150_000_000);
                let refunds = r.u64(100_000..9_000_000);
                let cents = |c: u64| format!("{}.{:02}", thousands(c / 100), c % 100);
                let total = cents(subs + services - refunds);
                let out = format!(
                    "Quarterly revenue summary — 2026Q3 (generated 2026-10-{:02} {:02}:{:02})\n\nSubscriptions (EUR) ........... {}\nServices (EUR) ................ {}\nRefunds (EUR) ................. -{}\nTotal revenue (EUR) ........... {total}\n",
                    r.u32(1..28),
                    r.u32(6..20),
                    r.u32(0..60),
                    cents(subs),
                    cents(services),
                    cents(refunds),
                );
                (
                    "shell",
                    json!({"command": "python reports/revenue.py --quarter 2026Q3"}),
                    out,
                    &["Total revenue", "revenue total", "revenue"][..],
                    &["Total revenue", "总收入", "收入合计"][..],
                    total,
                )
            }
            2 => {
                let p95 = r.u32(400..1500);
                let out = format!(
                    "{{\"window\":\"1h\",\"requests\":{},\"p50_latency_ms\":{},\"p95_latency_ms\":{p95},\"p99_latency_ms\":{},\"errors\":{}}}\n",
                    r.u32(10_000..90_000),
                    r.u32(60..300),
                    p95 + r.u32(200..900),
                    r.u32(0..30)
                );
                (
                    "shell",
                    json!({"command": "curl -s http://scoring.internal:9090/metrics/summary"}),
                    out,
                    &["p95_latency_ms", "p95 latency", "p95"][..],
                    &["p95_latency_ms", "p95 延迟", "p95"][..],
                    p95.to_string(),
                )
            }
            3 => {
                let v = format!("churn-xgb-2026.{:02}.{}", r.u32(6..11), r.u32(1..6));
                let out = format!(
                    "feature_store = feast://prod-eu\nmodel_version = {v}\ndecision_cache_ttl_s = {}\nworkers = {}\nlog_level = info\n",
                    r.u32(30..600),
                    r.u32(2..17)
                );
                (
                    "shell",
                    json!({"command": "scoringctl config show"}),
                    out,
                    &["model_version", "model version"][..],
                    &["model_version", "模型版本"][..],
                    v,
                )
            }
            4 => {
                let v = format!("{}.{:02}", r.u32(150..900), r.u32(0..100));
                let out = format!(
                    "-[ RECORD 1 ]-----+-----------\nsnapshot_date    | 2026-09-30\ncustomers        | {}\nmedian_ltv_eur   | {v}\nmean_ltv_eur     | {}.{:02}\n",
                    r.u32(10_000..40_000),
                    r.u32(900..2000),
                    r.u32(0..100)
                );
                (
                    "run_sql",
                    json!({"query": "\\x on\nSELECT * FROM marts.ltv_summary WHERE snapshot_date = '2026-09-30';"}),
                    out,
                    &["median_ltv_eur", "median LTV", "LTV"][..],
                    &["median_ltv_eur", "LTV 中位数", "LTV"][..],
                    v,
                )
            }
            5 => {
                let v = format!("{}.{} GiB", r.u32(8..200), r.u32(0..10));
                let mut out = String::new();
                for k in 0..4 {
                    out.push_str(&format!(
                        "2026-10-0{} {:02}:{:02}:{:02}  {:>10} subs/2026-q3/part-{k:05}.csv.gz\n",
                        r.u32(1..5),
                        r.u32(0..24),
                        r.u32(0..60),
                        r.u32(0..60),
                        r.u32(20_000_000..90_000_000)
                    ));
                }
                out.push_str(&format!(
                    "\nTotal Objects: {}\n   Total Size: {v}\n",
                    r.u32(200..4000)
                ));
                (
                    "shell",
                    json!({"command": "aws s3 ls s3://northwind-analytics-raw/subs/2026-q3/ --recursive --human-readable --summarize | tail -7"}),
                    out,
                    &["Total Size", "total size", "size of the export"][..],
                    &["Total Size", "总大小", "数据量"][..],
                    v,
                )
            }
            6 => {
                let v = format!("0.{}", r.u32(7000..9400));
                let m = r.u32(0..9);
                let out = format!(
                    "2026-10-04 11:0{m}:17 INFO train: fold 5/5 done (best_iteration={})\n2026-10-04 11:0{m}:19 INFO eval: holdout AUC={v} (n={})\n2026-10-04 11:0{m}:19 INFO eval: logloss=0.{} brier=0.{}\n",
                    r.u32(100..900),
                    r.u32(10_000..60_000),
                    r.u32(2000..4000),
                    r.u32(1000..2000)
                );
                (
                    "shell",
                    json!({"command": "python -m churn.train --config configs/xgb.yaml"}),
                    out,
                    &["AUC", "area under the curve"][..],
                    &["AUC", "曲线下面积"][..],
                    v,
                )
            }
            7 => {
                let fails = r.u32(20..900);
                let out = format!(
                    "12:0{}:11  Running with dbt=1.8.7\n12:0{}:14  1 of 3 START test not_null_subscriptions_id ............ [RUN]\n12:0{}:15  1 of 3 PASS not_null_subscriptions_id ............. [PASS in 0.{}s]\n12:0{}:15  2 of 3 FAIL {fails} unique_subscriptions_id ............ [FAIL {fails} in 0.{}s]\n12:0{}:16  3 of 3 PASS relationships_subscriptions_account_id  [PASS in 1.{}s]\n\nDone. PASS=2 WARN=0 ERROR=0 FAIL=1 SKIP=0 TOTAL=3\n",
                    r.u32(0..9),
                    r.u32(0..9),
                    r.u32(0..9),
                    r.u32(10..99),
                    r.u32(0..9),
                    r.u32(10..99),
                    r.u32(0..9),
                    r.u32(10..99)
                );
                (
                    "shell",
                    json!({"command": "dbt test --select subscriptions"}),
                    out,
                    &[
                        "unique_subscriptions_id",
                        "duplicate subscription ids",
                        "duplicate subscriptions",
                    ][..],
                    &["unique_subscriptions_id", "订阅 ID 重复", "重复订阅"][..],
                    fails.to_string(),
                )
            }
            8 => {
                let v = format!("{}.{:02}G", r.u32(1..12), r.u32(0..100));
                let out = format!(
                    "used_memory:{}\nused_memory_human:{v}\nused_memory_rss_human:{}.{:02}G\nused_memory_peak_human:{}.{:02}G\nmaxmemory_human:16.00G\n",
                    r.u64(1_000_000_000..9_000_000_000),
                    r.u32(1..12),
                    r.u32(0..100),
                    r.u32(12..16),
                    r.u32(0..100)
                );
                (
                    "shell",
                    json!({"command": "redis-cli -h features-cache.internal info memory | grep human"}),
                    out,
                    &["used_memory_human", "used memory", "memory used"][..],
                    &["used_memory_human", "内存占用", "已用内存"][..],
                    v,
                )
            }
            9 => {
                let total = r.u32(90..160);
                let v = format!("{} / {total}", r.u32(20..60));
                let out = format!(
                    "loading feature matrix ... ok ({} x {total})\nvariance filter: removed {}\ncorrelation filter (|r| > 0.95): removed {}\nfeatures selected: {v}\nwrote artifacts/features_selected.json\n",
                    r.u32(100_000..400_000),
                    r.u32(3..20),
                    r.u32(5..30)
                );
                (
                    "shell",
                    json!({"command": "python -m churn.features --select --dry-run"}),
                    out,
                    &["features selected", "selected features"][..],
                    &["features selected", "入选特征", "特征"][..],
                    v,
                )
            }
            10 => {
                let skipped = r.u32(40..900);
                let out = format!(
                    "exporting invoices 2026-07-01..2026-09-30\nfetched: {}\nexported: {}\nskipped (currency mismatch): {skipped}\nskipped (test accounts): {}\nwritten to /data/exports/invoices_q3.parquet\n",
                    thousands(r.u64(20_000..40_000)),
                    thousands(r.u64(18_000..20_000)),
                    r.u32(10..90)
                );
                (
                    "shell",
                    json!({"command": "python jobs/export_invoices.py --quarter 2026Q3"}),
                    out,
                    &[
                        "currency mismatch",
                        "skipped for currency",
                        "mismatched currency",
                    ][..],
                    &["currency mismatch", "币种不一致", "币种不匹配"][..],
                    skipped.to_string(),
                )
            }
            11 => {
                let v = r.u32(3..200);
                let out = format!(
                    "HTTP/2 200\ncontent-type: application/json\nx-request-id: {:08x}\nx-ratelimit-limit: 1000\nx-ratelimit-remaining: {v}\nx-ratelimit-reset: {}\n",
                    r.u32(0..u32::MAX),
                    r.u32(30..3600)
                );
                (
                    "shell",
                    json!({"command": "curl -sI -H \"Authorization: Bearer $CRM_TOKEN\" https://api.crm.example/v2/accounts?page=1"}),
                    out,
                    &[
                        "x-ratelimit-remaining",
                        "rate limit remaining",
                        "rate limit",
                    ][..],
                    &["x-ratelimit-remaining", "剩余配额", "限流"][..],
                    v.to_string(),
                )
            }
            12 => {
                let v = thousands(r.u64(1000..6000));
                let out = format!(
                    "scoring 2026-10-01 snapshot with {}\naccounts scored: {}\nPredicted churners (next 30d): {v} ({}.{}% of active base)\nwrote scores to marts.churn_scores\n",
                    ["churn-xgb-2026.09.2", "churn-lr-2026.08.1"][r.usize(0..2)],
                    thousands(r.u64(30_000..60_000)),
                    r.u32(4..12),
                    r.u32(0..10)
                );
                (
                    "shell",
                    json!({"command": "python -m churn.score --snapshot 2026-10-01"}),
                    out,
                    &[
                        "Predicted churners",
                        "predicted to churn",
                        "predicted churn",
                    ][..],
                    &["Predicted churners", "预测流失", "预计流失"][..],
                    v,
                )
            }
            13 => {
                let v = format!("2.{}.{}", r.u32(0..4), r.u32(0..4));
                let out = format!(
                    "Name: pandas\nVersion: {v}\nSummary: Powerful data structures for data analysis, time series, and statistics\nLocation: /opt/venv/lib/python3.11/site-packages\nRequires: numpy, python-dateutil, pytz, tzdata\n"
                );
                (
                    "shell",
                    json!({"command": "pip show pandas"}),
                    out,
                    &["pandas version", "Version", "pandas"][..],
                    &["pandas 版本", "Version", "pandas"][..],
                    v,
                )
            }
            _ => {
                if zh {
                    let subs = r.u64(1_000_000_000..2_000_000_000);
                    let services = r.u64(100_000_000..500_000_000);
                    let yuan = |c: u64| format!("{}.{:02}", thousands(c / 100), c % 100);
                    let v = yuan(subs + services);
                    let out = format!(
                        "华信订阅 2026 年第三季度收入报表\n订阅收入（元）：{}\n服务收入（元）：{}\n本季度总收入（元）：{v}\n",
                        yuan(subs),
                        yuan(services)
                    );
                    (
                        "shell",
                        json!({"command": "python reports/revenue_cn.py --quarter 2026Q3"}),
                        out,
                        &[][..],
                        &["总收入", "本季度总收入", "收入合计"][..],
                        v,
                    )
                } else {
                    let v = format!("{}.{:02}", r.u32(100..900), r.u32(0..100));
                    let out = format!(
                        "Concurrency Level:      {}\nTime taken for tests:   {}.{:03} seconds\nComplete requests:      {}\nFailed requests:        {}\nRequests per second:    {v} [#/sec] (mean)\nTime per request:       {}.{:03} [ms] (mean)\n",
                        r.u32(8..64),
                        r.u32(10..60),
                        r.u32(0..1000),
                        r.u32(5000..20_000),
                        r.u32(0..20),
                        r.u32(10..200),
                        r.u32(0..1000)
                    );
                    (
                        "shell",
                        json!({"command": "ab -n 10000 -c 32 http://scoring.internal:9090/score"}),
                        out,
                        &["Requests per second", "requests/sec", "throughput"][..],
                        &[][..],
                        v,
                    )
                }
            }
        };
        let lead = self.lead();
        let pos = self.tool(name, args, out, lead);
        self.fact_lang(FactKind::ToolLabel, en, zh_subject, &value, Role::Tool, pos);
        self.after_result();
        true
    }
}
