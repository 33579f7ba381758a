//! One cell of a table, named by its row key and its column's header.

use decima_core::Role;
use serde_json::json;

use super::super::FactKind;
use super::super::generator::Gen;

use super::thousands;

/// One table: its header cells, its rows (the first cell is the row key) and, per column,
/// the phrases naming it.
struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
    names: Vec<&'static [&'static str]>,
}

impl Table {
    /// A cell whose value is unique in the table, in a column other than the key: (row key,
    /// column names, value).
    fn pick(&self, rng: &mut fastrand::Rng) -> Option<(String, &'static [&'static str], String)> {
        let cells: Vec<&String> = self.rows.iter().flatten().collect();
        for _ in 0..16 {
            let r = rng.usize(0..self.rows.len());
            let c = rng.usize(1..self.header.len());
            let value = &self.rows[r][c];
            let clashes = cells.iter().filter(|v| v.contains(value.as_str())).count();
            if clashes == 1 {
                return Some((self.rows[r][0].clone(), self.names[c], value.clone()));
            }
        }
        None
    }

    fn markdown(&self) -> String {
        let mut out = format!("| {} |\n", self.header.join(" | "));
        out.push_str(&format!("|{}\n", "---|".repeat(self.header.len())));
        for row in &self.rows {
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        out
    }

    fn psql(&self) -> String {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.header[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: Vec<String>, right: bool| -> String {
            let parts: Vec<String> = cells
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (c, &w))| {
                    if right && i > 0 {
                        format!(" {c:>w$} ")
                    } else {
                        format!(" {c:<w$} ")
                    }
                })
                .collect();
            parts.join("|").trim_end().to_string()
        };
        let mut out = line(self.header.iter().map(|h| h.to_string()).collect(), false);
        out.push('\n');
        let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(w + 2)).collect();
        out.push_str(&dashes.join("+"));
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row.clone(), true));
            out.push('\n');
        }
        out.push_str(&format!("({} rows)\n", self.rows.len()));
        out
    }

    /// Printed the way pandas prints a frame with a named index.
    fn pandas(&self) -> String {
        let key_w = self
            .rows
            .iter()
            .map(|r| r[0].chars().count())
            .chain([self.header[0].chars().count()])
            .max()
            .unwrap_or(0);
        let widths: Vec<usize> = (1..self.header.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.header[c].chars().count()])
                    .max()
                    .unwrap_or(0)
                    + 2
            })
            .collect();
        let mut out = " ".repeat(key_w);
        for (h, w) in self.header[1..].iter().zip(&widths) {
            out.push_str(&format!("{h:>w$}"));
        }
        out.push('\n');
        out.push_str(self.header[0]);
        out.push('\n');
        for row in &self.rows {
            out.push_str(&format!("{:<key_w$}", row[0]));
            for (c, w) in row[1..].iter().zip(&widths) {
                out.push_str(&format!("{c:>w$}"));
            }
            out.push('\n');
        }
        out
    }

    fn csv(&self) -> String {
        let mut out = self.header.join(",");
        out.push('\n');
        for row in &self.rows {
            out.push_str(&row.join(","));
            out.push('\n');
        }
        out
    }
}

impl Table {
    /// Printed the way pandas prints a frame with a plain range index.
    fn pandas_range(&self) -> String {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.header[c].chars().count()])
                    .max()
                    .unwrap_or(0)
                    + 2
            })
            .collect();
        let mut out = " ".repeat(self.rows.len().to_string().len());
        for (h, w) in self.header.iter().zip(&widths) {
            out.push_str(&format!("{h:>w$}"));
        }
        out.push('\n');
        for (k, row) in self.rows.iter().enumerate() {
            out.push_str(&k.to_string());
            for (c, w) in row.iter().zip(&widths) {
                out.push_str(&format!("{c:>w$}"));
            }
            out.push('\n');
        }
        out
    }
}

/// `n` items of `pool`, in a random order, without repeats.
fn sample(rng: &mut fastrand::Rng, pool: &[&'static str], n: usize) -> Vec<&'static str> {
    let mut v = pool.to_vec();
    rng.shuffle(&mut v);
    v.truncate(n);
    v
}

impl Gen {
    /// A table in a tool's output or the assistant's message; one cell (sometimes two) is a fact.
    pub(in crate::fact_sessions) fn table(&mut self) -> bool {
        let Some(i) = self.tables.pop() else {
            return false;
        };
        if i == 5 {
            self.single_cell();
            return true;
        }
        let zh = self.zh;
        let r = &mut self.rng;
        let table = match i {
            0 => {
                let keys = if zh {
                    sample(
                        r,
                        &["华东", "华南", "华北", "西南", "华中", "东北", "西北"],
                        6,
                    )
                } else {
                    sample(
                        r,
                        &[
                            "DACH", "Nordics", "UK&I", "Benelux", "Iberia", "France", "Italy",
                        ],
                        6,
                    )
                };
                let rows = keys
                    .iter()
                    .map(|k| {
                        let subs = r.u64(5_000..60_000);
                        let churned = subs * r.u64(200..900) / 10_000;
                        vec![
                            k.to_string(),
                            thousands(subs),
                            thousands(churned),
                            format!("{:.2}%", churned as f64 * 100.0 / subs as f64),
                            format!("{}.{:02}", r.u32(18..70), r.u32(0..100)),
                        ]
                    })
                    .collect();
                if zh {
                    Table {
                        header: vec!["地区", "订阅数", "流失数", "流失率", "ARPU（元）"],
                        rows,
                        names: vec![
                            &["地区"],
                            &["订阅数"],
                            &["流失数", "流失账号"],
                            &["流失率"],
                            &["ARPU（元）", "ARPU"],
                        ],
                    }
                } else {
                    Table {
                        header: vec![
                            "region",
                            "subscribers",
                            "churned",
                            "churn_rate",
                            "ARPU (EUR)",
                        ],
                        rows,
                        names: vec![
                            &["region"],
                            &["subscribers"],
                            &["churned"],
                            &["churn_rate", "churn rate"],
                            &["ARPU (EUR)", "ARPU"],
                        ],
                    }
                }
            }
            1 => {
                let start = r.u32(1..7);
                let rows = (0..6)
                    .map(|k| {
                        let m = start + k;
                        let (y, m) = if m > 12 { (2026, m - 12) } else { (2025, m) };
                        let accounts = r.u64(2_000..6_000);
                        let retained = accounts * r.u64(600..900) / 1000;
                        vec![
                            format!("{y}-{m:02}"),
                            accounts.to_string(),
                            retained.to_string(),
                            format!("{:.3}", retained as f64 / accounts as f64),
                        ]
                    })
                    .collect();
                Table {
                    header: vec!["cohort", "accounts", "retained_m3", "retention_m3"],
                    rows,
                    names: if zh {
                        vec![
                            &["cohort"],
                            &["accounts", "账号数"],
                            &["retained_m3", "三个月留存数"],
                            &["retention_m3", "三个月留存率", "M3 留存"],
                        ]
                    } else {
                        vec![
                            &["cohort"],
                            &["accounts"],
                            &["retained_m3", "retained at month 3"],
                            &["retention_m3", "month-3 retention", "M3 retention"],
                        ]
                    },
                }
            }
            2 => {
                let keys: &[&str] = if zh {
                    &["基础版", "专业版", "团队版", "企业版", "旧版"]
                } else {
                    &["Basic", "Pro", "Team", "Enterprise", "Legacy"]
                };
                let rows = keys
                    .iter()
                    .map(|k| {
                        vec![
                            k.to_string(),
                            r.u32(800..20_000).to_string(),
                            format!("0.{:04}", r.u32(150..900)),
                            r.u32(90..900).to_string(),
                        ]
                    })
                    .collect();
                if zh {
                    Table {
                        header: vec!["套餐", "活跃用户数", "流失率", "在网天数中位数"],
                        rows,
                        names: vec![
                            &["套餐"],
                            &["活跃用户数", "活跃用户"],
                            &["流失率"],
                            &["在网天数中位数", "在网天数"],
                        ],
                    }
                } else {
                    Table {
                        header: vec![
                            "plan_tier",
                            "n_accounts",
                            "churn_rate",
                            "median_tenure_days",
                        ],
                        rows,
                        names: vec![
                            &["plan_tier"],
                            &["n_accounts", "accounts"],
                            &["churn_rate", "churn rate"],
                            &["median_tenure_days", "median tenure"],
                        ],
                    }
                }
            }
            3 => {
                let rows = (0..5)
                    .map(|_| {
                        vec![
                            format!("A-{}", r.u32(10_000..99_999)),
                            ["Basic", "Pro", "Team", "Enterprise"][r.usize(0..4)].to_string(),
                            r.u32(1..400).to_string(),
                            format!("{}.{:02}", r.u32(20..9000), r.u32(0..100)),
                            format!("2026-09-{:02}", r.u32(1..31)),
                        ]
                    })
                    .collect();
                Table {
                    header: vec!["account_id", "plan", "seats", "mrr_eur", "last_seen"],
                    rows,
                    names: if zh {
                        vec![
                            &["account_id"],
                            &["plan", "套餐"],
                            &["seats", "席位数"],
                            &["mrr_eur", "MRR", "月费"],
                            &["last_seen", "最后活跃"],
                        ]
                    } else {
                        vec![
                            &["account_id"],
                            &["plan"],
                            &["seats"],
                            &["mrr_eur", "MRR"],
                            &["last_seen", "last seen"],
                        ]
                    },
                }
            }
            4 => {
                let keys: &[&str] = if zh {
                    &["对照组", "年付提醒", "召回邮件", "九折券"]
                } else {
                    &["control", "annual_nudge", "winback_email", "discount_10"]
                };
                let base = r.u32(250..400);
                let rows = keys
                    .iter()
                    .enumerate()
                    .map(|(k, key)| {
                        let users = r.u64(8_000..20_000);
                        let rate = if k == 0 { base } else { base + r.u32(5..90) };
                        let conv = users * u64::from(rate) / 10_000;
                        let uplift = if k == 0 {
                            "—".to_string()
                        } else {
                            format!("+{}.{:02} pp", (rate - base) / 100, (rate - base) % 100)
                        };
                        vec![
                            key.to_string(),
                            thousands(users),
                            thousands(conv),
                            format!("{}.{:02}%", rate / 100, rate % 100),
                            uplift,
                        ]
                    })
                    .collect();
                if zh {
                    Table {
                        header: vec!["版本", "用户数", "转化数", "转化率", "提升"],
                        rows,
                        names: vec![&["版本"], &["用户数"], &["转化数"], &["转化率"], &["提升"]],
                    }
                } else {
                    Table {
                        header: vec!["variant", "users", "conversions", "conv_rate", "uplift"],
                        rows,
                        names: vec![
                            &["variant"],
                            &["users"],
                            &["conversions"],
                            &["conv_rate", "conversion rate"],
                            &["uplift"],
                        ],
                    }
                }
            }
            6 => {
                let keys = sample(
                    r,
                    &[
                        "paid_search",
                        "organic",
                        "partner",
                        "outbound",
                        "events",
                        "referral",
                    ],
                    5,
                );
                let rows = keys
                    .iter()
                    .map(|k| {
                        let accounts = r.u64(1_000..30_000);
                        let churned = accounts * r.u64(200..1200) / 10_000;
                        vec![
                            k.to_string(),
                            accounts.to_string(),
                            churned.to_string(),
                            format!("{:.2}", churned as f64 * 100.0 / accounts as f64),
                        ]
                    })
                    .collect();
                Table {
                    header: vec!["acquisition_channel", "accounts", "churned", "churn_pct"],
                    rows,
                    names: if zh {
                        vec![
                            &["acquisition_channel"],
                            &["accounts", "账号数"],
                            &["churned", "流失数"],
                            &["churn_pct", "流失率", "流失占比"],
                        ]
                    } else {
                        vec![
                            &["acquisition_channel"],
                            &["accounts"],
                            &["churned"],
                            &["churn_pct", "churn %", "churn rate"],
                        ]
                    },
                }
            }
            _ => {
                let start = r.u32(1..4);
                let rows = (0..6)
                    .map(|k| {
                        vec![
                            format!("2026-{:02}", start + k),
                            r.u32(900..3000).to_string(),
                            format!("0.{:04}", r.u32(250..700)),
                            r.u32(40..400).to_string(),
                        ]
                    })
                    .collect();
                if zh {
                    Table {
                        header: vec!["月份", "流失数", "流失率", "回流数"],
                        rows,
                        names: vec![&["月份"], &["流失数"], &["流失率"], &["回流数", "回流"]],
                    }
                } else {
                    Table {
                        header: vec!["month", "churned", "churn_rate", "reactivated"],
                        rows,
                        names: vec![
                            &["month"],
                            &["churned"],
                            &["churn_rate", "churn rate"],
                            &["reactivated"],
                        ],
                    }
                }
            }
        };
        let mut cells = Vec::new();
        if let Some(cell) = table.pick(r) {
            cells.push(cell);
        }
        if r.u8(0..3) == 0
            && let Some(cell) = table.pick(r)
            && cells.iter().all(|c| c.0 != cell.0 && c.1 != cell.1)
        {
            cells.push(cell);
        }
        let (by, pos) = match i {
            0 | 4 => {
                let (before, after) = if zh {
                    (
                        self.pick(&["汇总如下，数字来自刚才的查询。", "按要求整理成表："]),
                        self.pick(&[
                            "有两行我还想再核对一下。",
                            "备忘录里我会只保留最关键的几列。",
                        ]),
                    )
                } else {
                    (
                        self.pick(&[
                            "Here is the breakdown, straight from the query above.",
                            "Summary so far:",
                        ]),
                        self.pick(&[
                            "Two of these rows I still want to double-check.",
                            "For the memo I'd keep only the key columns.",
                        ]),
                    )
                };
                let intro = self.prose(1);
                let text = format!("{intro}\n\n{before}\n\n{}\n{after}", table.markdown());
                let pos = self.pos();
                self.say(Role::Assistant, text);
                (Role::Assistant, pos)
            }
            1 | 6 => {
                let query = if i == 1 {
                    "SELECT cohort, count(*) AS accounts, count(*) FILTER (WHERE active_m3) AS retained_m3,\n       round(avg(active_m3::int), 3) AS retention_m3\nFROM marts.cohorts GROUP BY 1 ORDER BY 1;"
                } else {
                    "SELECT acquisition_channel, count(*) AS accounts, count(*) FILTER (WHERE churned) AS churned,\n       round(100.0 * avg(churned::int), 2) AS churn_pct\nFROM marts.accounts_q3 GROUP BY 1;"
                };
                let lead = self.lead();
                (
                    Role::Tool,
                    self.tool("run_sql", json!({ "query": query }), table.psql(), lead),
                )
            }
            3 => {
                let lead = self.lead();
                let out = table.csv();
                (
                    Role::Tool,
                    self.tool(
                        "shell",
                        json!({ "command": "head -6 /data/exports/top_accounts_q3.csv" }),
                        out,
                        lead,
                    ),
                )
            }
            2 => {
                let lead = self.lead();
                let code = "df.groupby('plan_tier').agg(n_accounts=('account_id', 'nunique'), churn_rate=('churned', 'mean'), median_tenure_days=('tenure_days', 'median')).round(4)";
                (
                    Role::Tool,
                    self.tool("python", json!({ "code": code }), table.pandas(), lead),
                )
            }
            _ => {
                let lead = self.lead();
                let code = "monthly = df.groupby('month', as_index=False).agg(churned=('churned', 'sum'), churn_rate=('churned', 'mean'), reactivated=('reactivated', 'sum'))\nprint(monthly.tail(6))";
                (
                    Role::Tool,
                    self.tool(
                        "python",
                        json!({ "code": code }),
                        table.pandas_range(),
                        lead,
                    ),
                )
            }
        };
        for (row, names, value) in cells {
            self.fact_in_row(FactKind::TableCell, names, Some(&row), &value, by, pos);
        }
        if by == Role::Tool {
            self.after_result();
        } else {
            let t = self.chat_line();
            self.say(Role::User, t);
        }
        true
    }

    /// A one-row, one-column result: the column is all that says what the number is.
    fn single_cell(&mut self) {
        let v = self.rng.u64(40_000..250_000).to_string();
        let out = format!(" active_subscribers\n--------------------\n {v:>18}\n(1 row)\n");
        let lead = self.lead();
        let pos = self.tool(
            "run_sql",
            json!({ "query": "SELECT count(DISTINCT account_id) AS active_subscribers\nFROM marts.subscriptions\nWHERE status = 'active' AND snapshot_date = DATE '2026-09-30';" }),
            out,
            lead,
        );
        let names: &[&str] = if self.zh {
            &["active_subscribers", "活跃订阅数", "活跃订阅"]
        } else {
            &["active_subscribers", "active subscribers"]
        };
        self.fact_in_row(FactKind::TableCell, names, None, &v, Role::Tool, pos);
        self.after_result();
    }
}
