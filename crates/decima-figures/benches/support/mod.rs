//! A generator of runs for the benchmarks, held out from the unit tests: tool outputs with
//! tables and summaries as analysts' tools print them, and answers whose figures are real,
//! reformatted, derived or made up, each labelled with what it is. Each benchmark uses part of it.
#![allow(dead_code)]

use decima_figures::{LedgerBuilder, Origin, Source};

const REGIONS: &[&str] = &[
    "North", "South", "East", "West", "Central", "Overseas", "Online", "Retail",
];
const PRODUCTS: &[&str] = &[
    "widgets", "gadgets", "licences", "support", "hardware", "services",
];

/// One row of a generated sales table.
#[derive(Clone, Debug)]
pub struct Row {
    pub period: String,
    pub region: &'static str,
    pub product: &'static str,
    pub revenue: f64,
    pub cost: f64,
    pub units: f64,
    pub margin: f64,
}

/// A run's tool outputs and the rows they print.
pub struct Run {
    pub outputs: Vec<String>,
    pub rows: Vec<Row>,
}

/// What a sentence's figure is, as the generator made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Real,
    Reformatted,
    Derived,
    FabricatedDigit,
    FabricatedUnit,
}

impl Kind {
    pub fn fabricated(self) -> bool {
        matches!(self, Kind::FabricatedDigit | Kind::FabricatedUnit)
    }
}

/// A sentence of an answer and the byte span of the figure it is about.
pub struct Sentence {
    pub text: String,
    pub target: (usize, usize),
    pub kind: Kind,
}

/// `tables` tool outputs, each a period's sales: every region and product once, in a random
/// order, printed as CSV, as an aligned table or as summary lines.
pub fn run(rng: &mut fastrand::Rng, tables: usize) -> Run {
    let mut outputs = Vec::new();
    let mut all = Vec::new();
    for t in 0..tables {
        let mut rows: Vec<Row> = REGIONS
            .iter()
            .flat_map(|r| PRODUCTS.iter().map(move |p| (*r, *p)))
            .map(|(region, product)| row(rng, &period(t), region, product))
            .collect();
        rng.shuffle(&mut rows);
        let text = match t % 3 {
            0 => csv(&rows),
            1 => aligned(&rows),
            _ => summary(&rows),
        };
        outputs.push(text);
        all.extend(rows);
    }
    Run { outputs, rows: all }
}

/// A table's period, "Jan2019": a word each table's rows and the answer's sentences name.
fn period(t: usize) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!("{}{}", MONTHS[t % 12], 2000 + t / 12)
}

fn row(rng: &mut fastrand::Rng, period: &str, region: &'static str, product: &'static str) -> Row {
    let revenue = f64::from(rng.u32(10_000..20_000_000));
    let cost = (revenue * (0.3 + rng.f64() * 0.6)).round();
    let units = f64::from(rng.u32(10..50_000));
    let margin = ((revenue - cost) / revenue * 10_000.0).round() / 10_000.0;
    Row {
        period: period.to_owned(),
        region,
        product,
        revenue,
        cost,
        units,
        margin,
    }
}

fn csv(rows: &[Row]) -> String {
    let mut s = String::from("period,region,product,revenue (USD),cost (USD),units,margin\n");
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{},{},{:.4}\n",
            r.period, r.region, r.product, r.revenue, r.cost, r.units, r.margin
        ));
    }
    s
}

fn aligned(rows: &[Row]) -> String {
    let mut s = format!(
        "{:>5}  {:<8}  {:<9}  {:<9}  {:>12}  {:>12}  {:>8}  {:>7}\n",
        "", "period", "region", "product", "revenue_usd", "cost_usd", "units", "margin"
    );
    for (k, r) in rows.iter().enumerate() {
        s.push_str(&format!(
            "{k:>5}  {:<8}  {:<9}  {:<9}  {:>12.1}  {:>12.1}  {:>8}  {:>7.4}\n",
            r.period, r.region, r.product, r.revenue, r.cost, r.units, r.margin
        ));
    }
    s
}

fn summary(rows: &[Row]) -> String {
    let mut s = String::new();
    for r in rows {
        s.push_str(&format!(
            "{} {} {}: revenue ${}, cost ${}, units {}, margin {:.2}%\n",
            r.period,
            r.region,
            r.product,
            grouped(r.revenue, 0),
            grouped(r.cost, 0),
            r.units,
            r.margin * 100.0
        ));
    }
    s
}

/// "1,234,567.89".
pub fn grouped(v: f64, decimals: usize) -> String {
    let s = format!("{:.*}", decimals, v.abs());
    let (int, frac) = s
        .split_once('.')
        .map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
    let mut out = String::new();
    for (k, c) in int.chars().enumerate() {
        if k > 0 && (int.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    if v < 0.0 { format!("-{out}") } else { out }
}

fn european(v: f64, decimals: usize) -> String {
    grouped(v, decimals)
        .replace(',', "\u{1}")
        .replace('.', ",")
        .replace('\u{1}', ".")
}

/// A real value written the way an answer might: rounded, scaled, as a fraction or a
/// percentage, with a currency, in European style or in 万.
fn reformat(rng: &mut fastrand::Rng, v: f64, money: bool) -> String {
    let cur = if money {
        ["$", "", "USD "][rng.usize(..3)]
    } else {
        ""
    };
    match rng.usize(..6) {
        0 => format!("{cur}{}", grouped(v, 0)),
        1 => format!("{cur}{:.2}M", v / 1e6),
        2 => format!("{cur}{:.1}k", v / 1e3),
        3 => format!("{cur}{:.1} million", v / 1e6),
        4 => format!("{} USD", european(v, 2)),
        _ => format!("{:.1}万", v / 1e4),
    }
}

/// The same text with one significant digit changed.
fn change_digit(rng: &mut fastrand::Rng, text: &str) -> String {
    let digits: Vec<usize> = text
        .char_indices()
        .filter(|(_, c)| c.is_ascii_digit())
        .map(|(i, _)| i)
        .collect();
    let at = digits[rng.usize(..digits.len().min(3))];
    let old = text.as_bytes()[at] - b'0';
    let mut new = old;
    while new == old || (at == digits[0] && new == 0) {
        new = rng.u8(0..10);
    }
    let mut s = text.to_owned();
    s.replace_range(at..=at, &char::from(b'0' + new).to_string());
    s
}

/// The same text with its unit or scale changed: M and bn, k and M, % and a bare number, $ and €.
fn change_unit(text: &str) -> String {
    if let Some(head) = text.strip_suffix('M') {
        format!("{head}bn")
    } else if text.ends_with("million") {
        text.replace("million", "billion")
    } else if let Some(head) = text.strip_suffix('k') {
        format!("{head}M")
    } else if let Some(head) = text.strip_suffix('%') {
        head.to_owned()
    } else if text.contains('$') {
        text.replace('$', "€")
    } else if text.contains('€') {
        text.replace('€', "$")
    } else if let Some(head) = text.strip_suffix(" USD") {
        format!("{head} EUR")
    } else if text.ends_with('万') {
        text.replace('万', "亿")
    } else {
        format!("{text}%")
    }
}

fn push(text: &mut String, figure: &str) -> (usize, usize) {
    let start = text.len();
    text.push_str(figure);
    (start, text.len())
}

/// A sentence about a random row, its figure of the given kind.
pub fn sentence(rng: &mut fastrand::Rng, run: &Run, kind: Kind) -> Sentence {
    let r = &run.rows[rng.usize(..run.rows.len())];
    let mut text = format!("In {}, {} {} ", r.period, r.region, r.product);
    let target = match kind {
        Kind::Real => {
            text.push_str("revenue was ");
            push(&mut text, &grouped(r.revenue, 0))
        }
        Kind::Reformatted => {
            if rng.bool() {
                text.push_str("revenue came to ");
                let f = reformat(rng, r.revenue, true);
                push(&mut text, &f)
            } else {
                text.push_str("had a margin of ");
                push(&mut text, &format!("{:.1}%", r.margin * 100.0))
            }
        }
        Kind::Derived => derived(rng, run, r, &mut text),
        Kind::FabricatedDigit | Kind::FabricatedUnit => {
            let real = if rng.bool() {
                text.push_str("revenue came to ");
                reformat(rng, r.revenue, true)
            } else {
                text.push_str("had a margin of ");
                format!("{:.1}%", r.margin * 100.0)
            };
            let made_up = if kind == Kind::FabricatedDigit {
                change_digit(rng, &real)
            } else {
                change_unit(&real)
            };
            push(&mut text, &made_up)
        }
    };
    text.push_str(". ");
    Sentence { text, target, kind }
}

fn derived(rng: &mut fastrand::Rng, run: &Run, r: &Row, text: &mut String) -> (usize, usize) {
    match rng.usize(..4) {
        0 => {
            text.push_str(&format!("revenue of {} left ", grouped(r.revenue, 0)));
            let f = grouped(r.revenue - r.cost, 0);
            let span = push(text, &f);
            text.push_str(" after costs");
            span
        }
        1 => {
            let o = &run.rows[rng.usize(..run.rows.len())];
            text.push_str(&format!(
                "revenue of {} and {} {} {}'s {} add up to ",
                grouped(r.revenue, 0),
                o.period,
                o.region,
                o.product,
                grouped(o.revenue, 0)
            ));
            push(text, &grouped(r.revenue + o.revenue, 0))
        }
        2 => {
            let o = &run.rows[rng.usize(..run.rows.len())];
            text.push_str(&format!(
                "revenue went from {} to {} ({} {} {}), a change of ",
                grouped(r.revenue, 0),
                grouped(o.revenue, 0),
                o.period,
                o.region,
                o.product
            ));
            push(
                text,
                &format!("{:.1}%", (o.revenue - r.revenue) / r.revenue * 100.0),
            )
        }
        _ => {
            text.push_str(&format!("cost of {} was ", grouped(r.cost, 0),));
            let span = push(text, &format!("{:.1}%", r.cost / r.revenue * 100.0));
            text.push_str(&format!(" of revenue of {}", grouped(r.revenue, 0)));
            span
        }
    }
}

/// A ledger of the run's outputs, each a tool's.
pub fn ledger_builder(run: &Run) -> LedgerBuilder {
    let mut b = LedgerBuilder::new();
    for (k, text) in run.outputs.iter().enumerate() {
        let seq = i64::try_from(k).unwrap_or(i64::MAX) * 2 + 2;
        b.add_text(
            Source {
                origin: Origin::Tool,
                message_seq: seq,
                tool_call_id: Some(format!("call_{k}")),
                path: None,
            },
            text,
        );
    }
    b
}
