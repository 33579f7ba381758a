//! The shapes values take (`45 days`, `0.72`, `€14.5M`, `Friday`), rendered fresh for every
//! session in its language.

/// The shape of a value, rendered fresh for every session.
#[derive(Debug, Clone, Copy)]
pub(super) enum Shape {
    /// `45 days` / `45 天`.
    Days(u32, u32),
    /// `0.72`: thousandths between the bounds, two decimals.
    Ratio(u32, u32),
    /// `0.9214`.
    Rate4(u32, u32),
    /// `3.8%`: tenths of a percent between the bounds.
    Pct1(u32, u32),
    /// `19%`.
    PctInt(u32, u32),
    /// `€14.5M`.
    EurMillions,
    /// `06:40 UTC`.
    Clock,
    /// `2026-02-01`.
    Date,
    /// `2024-01`.
    Month,
    /// `250 seats` / `250 个席位`.
    Seats,
    /// A bare count between the bounds.
    Count(u32, u32),
    /// `€39.00`.
    Euro(u32, u32),
    /// `4 business hours` / `4 个工作小时`.
    Hours,
    /// `1,200 credits`.
    Credits,
    /// `Friday` / `周五`.
    Weekday,
    /// `25 MB`.
    Megabytes,
    /// `200 GB`.
    Gigabytes,
    /// A cloud region.
    Region,
    /// A mailing list address.
    Email,
    /// `22:00–06:00 CET`.
    Window,
    /// `two decimal places` / `两位小数`.
    Decimals,
    /// `50 rows` / `50 行`.
    Rows,
    /// A scratch schema name.
    Schema,
    /// `Thursday 15:00 CET` / `周四 15:00`.
    Deadline,
    /// `EUR`.
    Currency,
    /// `2026-07-01 to 2026-09-30`.
    Period,
    /// `25`, a multiple of five.
    TopN,
    /// `churn_q3_memo_v3.docx`.
    FileName,
    /// `400 words` / `800 字`.
    Words,
    /// `Free` / `免费版`.
    Plan,
    /// `2025-Q3`.
    Quarter,
}

const WEEKDAYS_EN: [&str; 5] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"];
const WEEKDAYS_ZH: [&str; 5] = ["周一", "周二", "周三", "周四", "周五"];

/// Renders a value of `shape` in the session's language.
pub(super) fn render(rng: &mut fastrand::Rng, shape: Shape, zh: bool) -> String {
    let pick =
        |rng: &mut fastrand::Rng, items: &[&str]| items[rng.usize(0..items.len())].to_string();
    match shape {
        Shape::Days(lo, hi) => {
            let n = rng.u32(lo..=hi);
            match (zh, rng.bool()) {
                (true, true) => format!("{n} 天"),
                (true, false) => format!("{n}天"),
                (false, _) => format!("{n} days"),
            }
        }
        Shape::Ratio(lo, hi) => format!("0.{:02}", rng.u32(lo..=hi) / 10),
        Shape::Rate4(lo, hi) => format!("0.{:04}", rng.u32(lo..=hi)),
        Shape::Pct1(lo, hi) => {
            let t = rng.u32(lo..=hi);
            format!("{}.{}%", t / 10, t % 10)
        }
        Shape::PctInt(lo, hi) => format!("{}%", rng.u32(lo..=hi)),
        Shape::EurMillions => format!("€{}.{}M", rng.u32(8..40), rng.u32(1..10)),
        Shape::Clock => format!("{:02}:{:02} UTC", rng.u32(3..8), rng.u32(0..12) * 5),
        Shape::Date => format!("2026-{:02}-{:02}", rng.u32(1..10), rng.u32(1..29)),
        Shape::Month => format!("{}-{:02}", rng.u32(2023..2026), rng.u32(1..13)),
        Shape::Seats => {
            let n = rng.u32(5..40) * 10;
            if zh {
                format!("{n} 个席位")
            } else {
                format!("{n} seats")
            }
        }
        Shape::Count(lo, hi) => rng.u32(lo..=hi).to_string(),
        Shape::Euro(lo, hi) => format!("€{}.{:02}", rng.u32(lo..=hi), rng.u32(0..20) * 5),
        Shape::Hours => {
            let n = rng.u32(2..13);
            if zh {
                format!("{n} 个工作小时")
            } else {
                format!("{n} business hours")
            }
        }
        Shape::Credits => format!("{},{:03} credits", rng.u32(1..9), rng.u32(0..10) * 100),
        Shape::Weekday => {
            let i = rng.usize(0..5);
            if zh { WEEKDAYS_ZH[i] } else { WEEKDAYS_EN[i] }.to_string()
        }
        Shape::Megabytes => format!("{} MB", rng.u32(2..20) * 5),
        Shape::Gigabytes => format!("{} GB", rng.u32(2..30) * 25),
        Shape::Region => {
            if zh {
                pick(
                    rng,
                    &["cn-shanghai", "cn-beijing", "cn-hangzhou", "cn-shenzhen"],
                )
            } else {
                pick(
                    rng,
                    &["eu-central-1", "eu-west-1", "eu-north-1", "eu-south-2"],
                )
            }
        }
        Shape::Email => format!(
            "{}@{}.example",
            pick(
                rng,
                &[
                    "finance-review",
                    "fin-board",
                    "controlling",
                    "cfo-office",
                    "rev-ops"
                ]
            ),
            pick(rng, &["northwind", "acme", "globex", "huaxin"])
        ),
        Shape::Window => {
            let from = rng.u32(19..24);
            let to = rng.u32(5..8);
            if zh {
                format!("{from}:00–{to:02}:00")
            } else {
                format!("{from}:00–{to:02}:00 CET")
            }
        }
        Shape::Decimals => {
            if zh {
                pick(rng, &["一位小数", "两位小数", "整数"])
            } else {
                pick(
                    rng,
                    &["one decimal place", "two decimal places", "whole numbers"],
                )
            }
        }
        Shape::Rows => {
            let n = rng.u32(2..12) * 10;
            if zh {
                format!("{n} 行")
            } else {
                format!("{n} rows")
            }
        }
        Shape::Schema => pick(
            rng,
            &[
                "analytics_sandbox",
                "scratch_churn",
                "tmp_analyst",
                "sbx_finance",
                "playground_q3",
            ],
        ),
        Shape::Deadline => {
            let i = rng.usize(0..5);
            let h = rng.u32(9..18);
            let m = if rng.bool() { "00" } else { "30" };
            if zh {
                format!("{} {h}:{m}", WEEKDAYS_ZH[i])
            } else {
                format!("{} {h}:{m} CET", WEEKDAYS_EN[i])
            }
        }
        Shape::Currency => {
            if zh {
                pick(rng, &["CNY", "USD", "HKD"])
            } else {
                pick(rng, &["EUR", "GBP", "CHF", "USD"])
            }
        }
        Shape::Period => {
            let (from, to) = [
                ("2025-10-01", "2025-12-31"),
                ("2026-01-01", "2026-03-31"),
                ("2026-04-01", "2026-06-30"),
                ("2026-07-01", "2026-09-30"),
            ][rng.usize(0..4)];
            if zh {
                format!("{from} 至 {to}")
            } else {
                format!("{from} to {to}")
            }
        }
        Shape::TopN => (rng.u32(2..11) * 5).to_string(),
        Shape::FileName => format!(
            "{}_v{}.{}",
            pick(
                rng,
                &["churn_q3_memo", "q3_churn_review", "churn-memo-fy26q3"]
            ),
            rng.u32(2..9),
            pick(rng, &["docx", "pdf", "md"])
        ),
        Shape::Words => {
            if zh {
                format!("{} 字", rng.u32(5..16) * 100)
            } else {
                format!("{} words", rng.u32(3..9) * 100)
            }
        }
        Shape::Plan => {
            if zh {
                pick(rng, &["免费版", "试用版", "体验版"])
            } else {
                pick(rng, &["Free", "Trial", "Starter"])
            }
        }
        Shape::Quarter => format!("{}-Q{}", rng.u32(2024..2026), rng.u32(1..5)),
    }
}

/// A value of `shape` different from `other`, for the value a correction replaces.
pub(super) fn render_other(rng: &mut fastrand::Rng, shape: Shape, zh: bool, other: &str) -> String {
    for _ in 0..32 {
        let v = render(rng, shape, zh);
        if v != other && !v.contains(other) && !other.contains(&v) {
            return v;
        }
    }
    // Every shape has far more than two values; this is only reached by a broken shape.
    format!("{other}0")
}
