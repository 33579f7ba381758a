//! Fidelity of extract compression on sessions from the independent analyst generator
//! (`decima_testkit::analyst_conversation`), in English and Chinese, at 2k, 10k and 100k
//! messages: once as one standard then one deep compaction of the whole history, and once as a
//! history that grows in rounds and is compressed whenever it crosses the thresholds, so the
//! global summary is folded again and again.
//!
//! Goals: every literal the user stated, every decision and every constraint survives; at least
//! 95% of the other literals do; every layer stays within its share. Run with
//! `cargo test -p decima-core --test fidelity_independent -- --nocapture` to see the recall table.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use decima_core::context::compress::PlanInput;
use decima_core::context::{
    CompressionLevel, HistoryBudget, Selection, Strategy, Summary, pinned_units, plan, select,
};
use decima_core::{EstimateCounter, Message, TokenCounter};
use decima_testkit::analyst_conversation::{
    AnalystConversationBuilder, AnalystFact, AnalystFactKind, Language,
};
use decima_testkit::stored;

/// The history budget: what a small (24k-token) window leaves for history after the answer's
/// reserve and the fixed layers. Global 1.6k, segments 4.8k, recent 9.6k tokens. (The suite
/// also passes at 8k; try `FIDELITY_BUDGET=8000`.)
const BUDGET: u32 = 16_000;
const ROUNDS: usize = 8;

fn compress(
    messages: &[Message],
    summaries: &[Summary],
    level: CompressionLevel,
    budget: HistoryBudget,
) -> Vec<Summary> {
    let p = plan(PlanInput {
        messages,
        pinned: &[],
        summaries,
        level,
        strategy: Strategy::Extract,
        budget,
        counter: &EstimateCounter,
        written: None,
    })
    .expect("plan");
    p.apply(summaries)
}

/// Everything the model would see from the history: summary texts (with their headers) and
/// the verbatim messages.
fn assembled(sel: &Selection<'_>) -> String {
    let mut out = String::new();
    for s in sel.global.iter().chain(sel.segments.iter()) {
        out.push_str(&s.header());
        out.push('\n');
        out.push_str(&s.text);
        out.push('\n');
    }
    for m in sel.pinned.iter().copied().chain(sel.recent.iter()) {
        out.push_str(&m.content);
        for c in &m.tool_calls {
            out.push_str(&c.arguments);
        }
        out.push('\n');
    }
    out
}

/// Layer budgets, as the request would be built. Right after a compaction the recent messages
/// fit their own share; later, as the history grows, Select lets them use what the summaries
/// leave free, so only the total bounds them.
fn layer_errors(
    sel: &Selection<'_>,
    b: &HistoryBudget,
    just_compressed: bool,
    what: &str,
) -> Vec<String> {
    let mut errors = Vec::new();
    let recent_share = if just_compressed {
        b.recent()
    } else {
        b.tokens
    };
    let checks = [
        ("global", sel.global_tokens, b.global()),
        ("segments", sel.segment_tokens, b.segments()),
        (
            "recent",
            sel.pinned_tokens + sel.recent_tokens,
            recent_share,
        ),
        ("total", sel.selected_tokens(), b.tokens),
    ];
    for (layer, used, share) in checks {
        if used > share {
            errors.push(format!("{what}: {layer} uses {used} of {share}"));
        }
    }
    if sel.compression_required() {
        errors.push(format!("{what}: still over budget"));
    }
    for s in sel.global.iter().chain(sel.segments.iter()) {
        let counted = EstimateCounter.count_text(&format!("{}\n{}", s.header(), s.text))
            + EstimateCounter.message_overhead();
        if counted > s.tokens {
            errors.push(format!(
                "{what}: summary {} counts {} tokens but costs {counted}",
                s.id, s.tokens
            ));
        }
    }
    errors
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
        format!("{:>3}/{:<3} {:>5.1}%", self.kept, self.total, self.pct())
    }
}

struct Recall {
    user_literals: Tally,
    other_literals: Tally,
    decisions: Tally,
    constraints: Tally,
    lost: Vec<String>,
}

fn recall(facts: &[AnalystFact], upto: usize, context: &str) -> Recall {
    let mut r = Recall {
        user_literals: Tally::default(),
        other_literals: Tally::default(),
        decisions: Tally::default(),
        constraints: Tally::default(),
        lost: Vec::new(),
    };
    for f in facts.iter().filter(|f| f.position <= upto) {
        let kept = context.contains(&f.text);
        let tally = match (f.kind, f.by_user) {
            (AnalystFactKind::Literal, true) => &mut r.user_literals,
            (AnalystFactKind::Literal, false) => &mut r.other_literals,
            (AnalystFactKind::Decision, _) => &mut r.decisions,
            (AnalystFactKind::Constraint, _) => &mut r.constraints,
        };
        tally.add(kept);
        if !kept {
            r.lost.push(format!(
                "{:?}/{} (user: {}, message {}): {}",
                f.kind, f.label, f.by_user, f.position, f.text
            ));
        }
    }
    r
}

fn row(
    lang: Language,
    size: usize,
    scenario: &str,
    r: &Recall,
    sel: &Selection<'_>,
    secs: f64,
) -> String {
    format!(
        "{:<7} {:>6} {:<14} | user lit {} | other lit {} | decisions {} | constraints {} | global {:>4} seg {:>5} recent {:>5} | {:>5.1}s",
        match lang {
            Language::English => "en",
            Language::Chinese => "zh",
        },
        size,
        scenario,
        r.user_literals.cell(),
        r.other_literals.cell(),
        r.decisions.cell(),
        r.constraints.cell(),
        sel.global_tokens,
        sel.segment_tokens,
        sel.recent_tokens + sel.pinned_tokens,
        secs,
    )
}

fn goal_errors(r: &Recall, what: &str) -> Vec<String> {
    let mut errors = Vec::new();
    for (name, t, min) in [
        ("user literals", r.user_literals, 100.0),
        ("decisions", r.decisions, 100.0),
        ("constraints", r.constraints, 100.0),
        ("other literals", r.other_literals, 95.0),
    ] {
        if t.pct() < min {
            errors.push(format!("{what}: {name} {:.1}% < {min}%", t.pct()));
        }
    }
    if !errors.is_empty() {
        errors.extend(r.lost.iter().take(30).map(|l| format!("  lost {l}")));
    }
    errors
}

fn run_size(size: usize) {
    // FIDELITY_BUDGET and FIDELITY_SEED let a sceptic try other settings by hand.
    let tokens = std::env::var("FIDELITY_BUDGET")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(BUDGET);
    let seed_offset: u64 = std::env::var("FIDELITY_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let budget = HistoryBudget::new(tokens);
    let mut errors = Vec::new();
    let mut table = Vec::new();
    for (seed, lang) in [(101u64, Language::English), (202, Language::Chinese)] {
        let seed = seed + seed_offset;
        let started = Instant::now();
        let built = AnalystConversationBuilder::new(seed + size as u64, size, lang).build();
        let messages: Vec<Message> = built
            .messages
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, d)| stored(i as i64 + 1, d))
            .collect();
        assert!(pinned_units(&messages).is_empty());
        let generated = started.elapsed().as_secs_f64();

        // One standard, then one deep compaction of the whole history.
        let mut summaries: Vec<Summary> = Vec::new();
        for level in [CompressionLevel::Standard, CompressionLevel::Deep] {
            let started = Instant::now();
            summaries = compress(&messages, &summaries, level, budget);
            let sel = select(&messages, &[], &summaries, &budget).expect("select");
            let what = format!("{lang:?} {size} {level:?}");
            errors.extend(layer_errors(&sel, &budget, true, &what));
            let r = recall(&built.facts, messages.len(), &assembled(&sel));
            errors.extend(goal_errors(&r, &what));
            if std::env::var("FIDELITY_DUMP").is_ok() {
                for s in sel.global.iter().chain(sel.segments.iter()) {
                    eprintln!("{}\n{}", s.header(), s.text);
                }
            }
            let scenario = format!("{level:?}").to_lowercase();
            table.push(row(
                lang,
                size,
                &scenario,
                &r,
                &sel,
                started.elapsed().as_secs_f64(),
            ));
        }

        // The history grows in rounds and is compressed whenever it crosses the thresholds.
        let started = Instant::now();
        let mut summaries: Vec<Summary> = Vec::new();
        let mut compactions = 0;
        let mut folds = 0;
        for round in 1..=ROUNDS {
            let upto = size * round / ROUNDS;
            let prefix = &messages[..upto];
            let mut compressed = false;
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
                let before_global = sel.global.map(|g| g.id.clone());
                let after = compress(prefix, &summaries, level, budget);
                if after == summaries {
                    break;
                }
                summaries = after;
                compactions += 1;
                compressed = true;
                let sel = select(prefix, &[], &summaries, &budget).expect("select");
                if sel.global.map(|g| g.id.clone()) != before_global {
                    folds += 1;
                }
            }
            let sel = select(prefix, &[], &summaries, &budget).expect("select");
            let what = format!("{lang:?} {size} round {round}");
            errors.extend(layer_errors(&sel, &budget, compressed, &what));
            if round < ROUNDS {
                let r = recall(&built.facts, upto, &assembled(&sel));
                errors.extend(goal_errors(&r, &what));
            }
        }
        let sel = select(&messages, &[], &summaries, &budget).expect("select");
        let r = recall(&built.facts, messages.len(), &assembled(&sel));
        let what = format!("{lang:?} {size} rounds");
        errors.extend(goal_errors(&r, &what));
        if size >= 10_000 {
            assert!(
                folds >= 2,
                "{what}: the global summary must fold again ({folds})"
            );
        }
        table.push(row(
            lang,
            size,
            &format!("{ROUNDS} rounds/{compactions}c"),
            &r,
            &sel,
            started.elapsed().as_secs_f64(),
        ));
        table.push(format!(
            "{:<7} {:>6} generated {} messages, {} facts in {generated:.1}s; {folds} global folds",
            "",
            size,
            messages.len(),
            built.facts.len()
        ));
    }
    eprintln!("\nfidelity of extract compression, budget {tokens} tokens:");
    for line in &table {
        eprintln!("{line}");
    }
    assert!(errors.is_empty(), "\n{}", errors.join("\n"));
}

#[test]
fn independent_fidelity_2k() {
    run_size(2_000);
}

#[test]
fn independent_fidelity_10k() {
    run_size(10_000);
}

#[test]
fn independent_fidelity_100k() {
    run_size(100_000);
}
