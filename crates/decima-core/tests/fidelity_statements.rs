//! Fidelity of extract compression measured by statements: a fact counts only where its subject
//! and its value survive together (`decima_testkit::fact_sessions`, written apart from the
//! extract code, scores it). English and Chinese analyst sessions of 2k, 10k and 100k messages,
//! two seeds each, compressed the way the runtime does: once as one standard then one deep
//! compaction of the whole history, and once growing in rounds and compressed whenever usage
//! crosses the thresholds, so the global summary is folded again and again.
//!
//! What the model would see is scored: the summaries with their headers, then the messages sent
//! verbatim. A correction is lost when a *summary* that covers it presents the old value as
//! current; the verbatim messages are the conversation itself, where the correction follows what
//! it corrects, so the checker's stale rule (written for summaries: a raw transcript fails it by
//! design) is applied to the summaries' text only, and only once the correction is summarised.
//!
//! Goals: every user clause and every correction's current value survives with its subject,
//! stale values are never presented as current, and no spaced literal is cut; the great
//! majority of tool labels, table cells, code values and restatements survive. The floors
//! asserted (see `floor`) are what the strategy reaches now, short of that goal for user clauses
//! and corrections; every miss is printed. When anything had to be dropped or folded into
//! counts, the global summary used most of its share.
//!
//! Run `cargo test -p decima-core --test fidelity_statements -- --nocapture` for the tables.
//! `FIDELITY_BUDGET`, `FIDELITY_SEED` and `FIDELITY_DUMP` let a sceptic try other settings.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Instant;

use decima_core::context::compress::PlanInput;
use decima_core::context::{
    CompressionLevel, HistoryBudget, Selection, Strategy, Summary, plan, select,
};
use decima_core::{EstimateCounter, Message};
use decima_testkit::analyst_conversation::Language;
use decima_testkit::fact_sessions::{Fact, FactKind, Verdict, generate, statement_kept};
use decima_testkit::stored;

/// The history budget, as in `fidelity_independent`: global 1.6k, segments 4.8k, recent 9.6k.
const BUDGET: u32 = 16_000;
const ROUNDS: usize = 8;
const SEEDS: [u64; 2] = [11, 29];

fn compress(
    messages: &[Message],
    summaries: &[Summary],
    level: CompressionLevel,
    budget: HistoryBudget,
) -> Vec<Summary> {
    plan(PlanInput {
        messages,
        pinned: &[],
        summaries,
        level,
        strategy: Strategy::Extract,
        budget,
        counter: &EstimateCounter,
        written: None,
    })
    .expect("plan")
    .apply(summaries)
}

/// The summaries as the model sees them, headers included.
fn summary_text(sel: &Selection<'_>) -> String {
    let mut out = String::new();
    for s in sel.global.iter().chain(sel.segments.iter()) {
        out.push_str(&s.header());
        out.push('\n');
        out.push_str(&s.text);
        out.push_str("\n\n");
    }
    out
}

/// Everything the model would see from the history: the summaries, then the verbatim messages.
fn assembled(sel: &Selection<'_>) -> String {
    let mut out = summary_text(sel);
    for m in sel.pinned.iter().copied().chain(sel.recent.iter()) {
        out.push_str(&m.content);
        for c in &m.tool_calls {
            out.push('\n');
            out.push_str(&c.name);
            out.push(' ');
            out.push_str(&c.arguments);
        }
        out.push_str("\n\n");
    }
    out
}

#[derive(Default, Clone, Copy)]
struct Tally {
    kept: usize,
    total: usize,
}

impl Tally {
    fn add(&mut self, kept: bool) {
        self.total += 1;
        self.kept += usize::from(kept);
    }

    fn pct(&self) -> f64 {
        if self.total == 0 {
            100.0
        } else {
            self.kept as f64 * 100.0 / self.total as f64
        }
    }

    fn cell(&self) -> String {
        if self.total == 0 {
            "    –    ".into()
        } else {
            format!("{:>2}/{:<2} {:>3.0}%", self.kept, self.total, self.pct())
        }
    }
}

/// Recall per kind, over all facts stated so far and over those a summary covers.
#[derive(Default)]
struct Recall {
    all: BTreeMap<FactKind, Tally>,
    covered: BTreeMap<FactKind, Tally>,
    stale: usize,
    truncated: usize,
    lost: Vec<String>,
}

impl Recall {
    fn total(&self, map: &BTreeMap<FactKind, Tally>) -> Tally {
        map.values().fold(Tally::default(), |a, t| Tally {
            kept: a.kept + t.kept,
            total: a.total + t.total,
        })
    }
}

/// Scores the facts stated up to message `upto` against what the model would see.
fn recall(facts: &[Fact], upto: usize, sel: &Selection<'_>) -> Recall {
    let context = assembled(sel);
    let summaries = summary_text(sel);
    let mut r = Recall::default();
    for f in facts.iter().filter(|f| f.position <= upto) {
        let current = Fact {
            replaced: None,
            ..f.clone()
        };
        let covered = (f.position as i64) <= sel.frontier;
        let mut verdict = statement_kept(&context, &current);
        if verdict.is_kept() && f.replaced.is_some() && covered {
            // Stale only where a summary that covers the correction presents the old value as
            // current; a correction still sent verbatim follows what it corrects.
            let in_summaries = statement_kept(&summaries, f);
            if in_summaries == Verdict::Stale {
                verdict = Verdict::Stale;
            }
        }
        let kept = verdict.is_kept();
        r.stale += usize::from(verdict == Verdict::Stale);
        r.truncated += usize::from(verdict == Verdict::Truncated);
        r.all.entry(f.kind).or_default().add(kept);
        if covered {
            r.covered.entry(f.kind).or_default().add(kept);
        }
        if !kept {
            r.lost.push(format!(
                "{} {:<13} at {} ({}): {:?} = {:?}{}",
                f.id,
                verdict.name(),
                f.position,
                if covered { "covered" } else { "verbatim" },
                f.subject.first().cloned().unwrap_or_default(),
                f.value,
                f.replaced
                    .as_ref()
                    .map(|o| format!(" (was {o:?})"))
                    .unwrap_or_default()
            ));
        }
    }
    r
}

/// The floor of each kind's recall over a whole history (the standard, deep and last-round
/// rows), set at what the extract strategy reaches now on these fixtures, below the goal of 100%
/// for user clauses and corrections: the misses are listed when the suite runs with
/// `--nocapture`, and `docs/PERFORMANCE.md` keeps the table.
fn floor(kind: FactKind) -> f64 {
    match kind {
        FactKind::UserClause => 85.0,
        FactKind::Correction => 80.0,
        FactKind::ToolLabel | FactKind::TableCell | FactKind::CodeValue => 90.0,
        FactKind::SpacedLiteral | FactKind::Decision => 90.0,
        FactKind::Constraint => 80.0,
        FactKind::Restatement => 75.0,
    }
}

/// Every fact of every kind together, over a whole history and after each round.
const OVERALL_FLOOR: f64 = 92.0;
const ROUND_FLOOR: f64 = 85.0;
/// At most this many stale values presented as current, and spaced literals cut, per history.
const MAX_STALE: usize = 1;
const MAX_TRUNCATED: usize = 2;

fn goal_errors(r: &Recall, what: &str, whole: bool) -> Vec<String> {
    let mut errors = Vec::new();
    if whole {
        for (kind, t) in &r.all {
            if t.pct() < floor(*kind) {
                errors.push(format!(
                    "{what}: {} {:.1}% < {}%",
                    kind.name(),
                    t.pct(),
                    floor(*kind)
                ));
            }
        }
    }
    let overall = r.total(&r.all).pct();
    let goal = if whole { OVERALL_FLOOR } else { ROUND_FLOOR };
    if overall < goal {
        errors.push(format!("{what}: all facts {overall:.1}% < {goal}%"));
    }
    if r.stale > MAX_STALE {
        errors.push(format!(
            "{what}: {} stale values presented as current",
            r.stale
        ));
    }
    if r.truncated > MAX_TRUNCATED {
        errors.push(format!("{what}: {} spaced literals cut", r.truncated));
    }
    if !errors.is_empty() {
        errors.extend(r.lost.iter().take(40).map(|l| format!("  lost {l}")));
    }
    errors
}

/// When anything was dropped or folded into counts, the global summary must have used most of
/// its share: a summary far below its share that still dropped facts threw them away.
fn budget_use_errors(
    sel: &Selection<'_>,
    b: &HistoryBudget,
    r: &Recall,
    what: &str,
) -> Vec<String> {
    let folded = sel
        .global
        .iter()
        .chain(sel.segments.iter())
        .any(|s| s.text.contains("- folded "));
    let covered_lost = r.total(&r.covered).kept < r.total(&r.covered).total;
    let dropped = folded || covered_lost;
    let used = sel.global_tokens as f64 / b.global() as f64;
    if dropped && sel.global.is_some() && used < 0.8 {
        vec![format!(
            "{what}: the global summary used {} of its {} tokens ({:.0}%) while {} was dropped",
            sel.global_tokens,
            b.global(),
            used * 100.0,
            if folded { "detail" } else { "a fact" }
        )]
    } else {
        Vec::new()
    }
}

fn layer_errors(sel: &Selection<'_>, b: &HistoryBudget, what: &str) -> Vec<String> {
    let mut errors = Vec::new();
    for (layer, used, share) in [
        ("global", sel.global_tokens, b.global()),
        ("segments", sel.segment_tokens, b.segments()),
        ("total", sel.selected_tokens(), b.tokens),
    ] {
        if used > share {
            errors.push(format!("{what}: {layer} uses {used} of {share}"));
        }
    }
    if sel.compression_required() {
        errors.push(format!("{what}: still over budget"));
    }
    errors
}

const KINDS: [FactKind; 9] = FactKind::ALL;

fn header() -> String {
    let mut h = format!("{:<3} {:>6} {:>4} {:<13}", "", "size", "seed", "scenario");
    for k in KINDS {
        let name: String = k.name().chars().take(9).collect();
        h.push_str(&format!(" | {name:^9}"));
    }
    h.push_str(" |  all (covered)    | global  seg  ");
    h
}

fn row(
    lang: Language,
    size: usize,
    seed: u64,
    scenario: &str,
    r: &Recall,
    sel: &Selection<'_>,
) -> String {
    let mut line = format!(
        "{:<3} {:>6} {:>4} {:<13}",
        match lang {
            Language::English => "en",
            Language::Chinese => "zh",
        },
        size,
        seed,
        scenario
    );
    for k in KINDS {
        line.push_str(&format!(
            " | {}",
            r.all.get(&k).copied().unwrap_or_default().cell()
        ));
    }
    line.push_str(&format!(
        " | {} ({}) | {:>5} {:>5}",
        r.total(&r.all).cell(),
        r.total(&r.covered).cell(),
        sel.global_tokens,
        sel.segment_tokens
    ));
    line
}

fn run_size(size: usize) {
    let tokens = std::env::var("FIDELITY_BUDGET")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(BUDGET);
    let seed_offset: u64 = std::env::var("FIDELITY_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let dump = std::env::var("FIDELITY_DUMP").is_ok();
    let budget = HistoryBudget::new(tokens);
    let mut errors = Vec::new();
    let mut table = vec![header()];
    let started = Instant::now();
    for lang in [Language::English, Language::Chinese] {
        for seed in SEEDS {
            let seed = seed + seed_offset;
            let session = generate(seed, size, lang);
            let messages: Vec<Message> = session
                .messages
                .iter()
                .cloned()
                .enumerate()
                .map(|(i, d)| stored(i as i64 + 1, d))
                .collect();
            let facts = &session.facts;

            // One standard, then one deep compaction of the whole history.
            let mut summaries: Vec<Summary> = Vec::new();
            for level in [CompressionLevel::Standard, CompressionLevel::Deep] {
                summaries = compress(&messages, &summaries, level, budget);
                let sel = select(&messages, &[], &summaries, &budget).expect("select");
                let what = format!("{lang:?} {size} seed {seed} {level:?}");
                let r = recall(facts, messages.len(), &sel);
                errors.extend(layer_errors(&sel, &budget, &what));
                errors.extend(goal_errors(&r, &what, true));
                errors.extend(budget_use_errors(&sel, &budget, &r, &what));
                if dump {
                    eprintln!("==== {what}\n{}", summary_text(&sel));
                    for l in &r.lost {
                        eprintln!("  lost {l}");
                    }
                }
                let scenario = format!("{level:?}").to_lowercase();
                table.push(row(lang, size, seed, &scenario, &r, &sel));
            }

            // The history grows in rounds and is compressed whenever it crosses the thresholds.
            let mut summaries: Vec<Summary> = Vec::new();
            let mut compactions = 0;
            for round in 1..=ROUNDS {
                let upto = size * round / ROUNDS;
                let prefix = &messages[..upto];
                for _ in 0..6 {
                    let sel = select(prefix, &[], &summaries, &budget).expect("select");
                    let usage = f64::from(sel.required_tokens()) / f64::from(budget.tokens);
                    let level = if usage >= 0.90 || sel.compression_required() {
                        CompressionLevel::Deep
                    } else if usage >= 0.85 {
                        CompressionLevel::Standard
                    } else {
                        break;
                    };
                    let after = compress(prefix, &summaries, level, budget);
                    if after == summaries {
                        break;
                    }
                    summaries = after;
                    compactions += 1;
                }
                let sel = select(prefix, &[], &summaries, &budget).expect("select");
                let what = format!("{lang:?} {size} seed {seed} round {round}");
                let r = recall(facts, upto, &sel);
                errors.extend(layer_errors(&sel, &budget, &what));
                errors.extend(goal_errors(&r, &what, round == ROUNDS));
                errors.extend(budget_use_errors(&sel, &budget, &r, &what));
                if round == ROUNDS {
                    if dump {
                        eprintln!("==== {what}\n{}", summary_text(&sel));
                        for l in &r.lost {
                            eprintln!("  lost {l}");
                        }
                    }
                    table.push(row(
                        lang,
                        size,
                        seed,
                        &format!("{ROUNDS} rounds/{compactions}c"),
                        &r,
                        &sel,
                    ));
                }
            }
        }
    }
    eprintln!(
        "\nstatement fidelity of extract compression, budget {tokens} tokens ({:.1}s):",
        started.elapsed().as_secs_f64()
    );
    for line in &table {
        eprintln!("{line}");
    }
    assert!(errors.is_empty(), "\n{}", errors.join("\n"));
}

#[test]
fn statement_fidelity_2k() {
    run_size(2_000);
}

#[test]
fn statement_fidelity_10k() {
    run_size(10_000);
}

#[test]
fn statement_fidelity_100k() {
    run_size(100_000);
}
