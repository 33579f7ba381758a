//! Folding: summaries of summaries. Segment summaries that outgrow their share are merged into
//! the global summary by summarising again; a global summary that outgrows its share is rendered
//! more deeply. Every summary is parsed back into a [`Digest`] first, model-written ones
//! included (their own sections are kept as notes), so folding keeps what they said.
//!
//! A maximum length is enforced by priority, never by truncating text blindly: the goal,
//! constraints, decisions and the user's literals go first, then todos, recent operations, the
//! older variants of decisions and constraints stated in many variants, notes and the other
//! literals, newest first; what does not fit is folded into counts per tool and per kind of
//! literal. The result never exceeds its budget.

use crate::TokenCounter;
use crate::context::extract::{Counting, Detail, Digest};
use crate::context::summary::{Strategy, Summary};

/// Tokens a summary's text costs when sent as a message.
pub fn summary_tokens(text: &str, counter: &dyn TokenCounter) -> u32 {
    counter
        .count_text(text)
        .saturating_add(counter.message_overhead())
}

/// Renders `digest` at `from` detail, filling `max_tokens` by priority (see
/// [`Digest::render_budgeted`]). The whole digest when it fits; otherwise the most important
/// items that fit, the rest folded into counts. The tokens returned never exceed `max_tokens`,
/// unless `max_tokens` is below a message's fixed overhead.
pub fn render_within(
    digest: &Digest,
    from: Detail,
    max_tokens: u32,
    counter: &dyn TokenCounter,
) -> (String, u32) {
    digest.render_budgeted(from, max_tokens, &Counting(counter))
}

/// Folds summaries (oldest first) and optionally a fresh digest of messages into one text
/// within `max_tokens`, keeping model-written content as well as the extract strategy's.
pub fn fold_summaries(
    summaries: &[&Summary],
    extra: Option<Digest>,
    from: Detail,
    max_tokens: u32,
    counter: &dyn TokenCounter,
) -> (String, u32) {
    let mut digest = Digest::default();
    for s in summaries {
        digest.merge(Digest::parse(&s.text));
    }
    if let Some(d) = extra {
        digest.merge(d);
    }
    render_within(&digest, from, max_tokens, counter)
}

/// Like [`fold_summaries`], but what does not fit `max_tokens` comes back as a digest instead
/// of being folded into counts, so the caller can carry it into the next summary.
pub fn fold_summaries_spill(
    summaries: &[&Summary],
    from: Detail,
    max_tokens: u32,
    counter: &dyn TokenCounter,
) -> (String, u32, Digest) {
    let mut digest = Digest::default();
    for s in summaries {
        digest.merge(Digest::parse(&s.text));
    }
    digest.render_budgeted_spill(from, max_tokens, &Counting(counter))
}

/// The strategy to record for a summary made of parts written by `parts`: theirs when they
/// all agree (folding model-written summaries keeps them model-written), otherwise `fallback`.
pub fn fold_strategy(parts: impl IntoIterator<Item = Strategy>, fallback: Strategy) -> Strategy {
    let mut parts = parts.into_iter();
    match parts.next() {
        Some(first) if parts.all(|p| p == first) => first,
        _ => fallback,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::extract::Source;
    use crate::context::summary::SummaryLevel;
    use crate::{EstimateCounter, Role};

    fn summary(i: usize, text: String, strategy: Strategy) -> Summary {
        Summary {
            id: format!("s{i}"),
            level: SummaryLevel::Segment,
            start_seq: i as i64 + 1,
            end_seq: i as i64 + 1,
            tokens: summary_tokens(&text, &EstimateCounter),
            text,
            strategy,
        }
    }

    fn extract_summary(i: usize, role: Role, content: &str) -> Summary {
        let d = Digest::from_continuation([Source::text(role.into(), content)]);
        summary(i, d.render(Detail::Standard), Strategy::Extract)
    }

    #[test]
    fn folding_fills_the_budget_by_priority_and_never_exceeds_it() {
        let summaries: Vec<Summary> = (0..30)
            .map(|i| {
                extract_summary(
                    i,
                    Role::Assistant,
                    &format!(
                        "Decision: exclude batch {i}. We read /data/part-{i}.csv and ACC-{i:05}."
                    ),
                )
            })
            .collect();
        let refs: Vec<&Summary> = summaries.iter().collect();
        let (full, full_tokens) =
            fold_summaries(&refs, None, Detail::Standard, u32::MAX, &EstimateCounter);
        for i in 0..30 {
            for lit in [format!("/data/part-{i}.csv"), format!("ACC-{i:05}")] {
                assert!(full.contains(&lit), "{lit}");
            }
        }
        for max in [10u32, 60, 200, full_tokens / 2, full_tokens - 1] {
            let (small, tokens) =
                fold_summaries(&refs, None, Detail::Standard, max, &EstimateCounter);
            assert!(tokens <= max, "{tokens} > {max}");
            assert_eq!(tokens, summary_tokens(&small, &EstimateCounter));
            if max >= 200 {
                // Decisions come first, newest first.
                assert!(small.contains("exclude batch 29."), "{small}");
                assert!(
                    tokens + 40 >= max,
                    "a fold uses its budget: {tokens} of {max}\n{small}"
                );
            }
        }
        // Folding a fold again is stable.
        let (once, _) = fold_summaries(&refs, None, Detail::Folded, 200, &EstimateCounter);
        let again = summary(0, once.clone(), Strategy::Extract);
        let (twice, _) = fold_summaries(&[&again], None, Detail::Folded, 200, &EstimateCounter);
        assert_eq!(twice, once);
    }

    /// Defect b: literals grew without bound until the global summary exceeded the budget.
    /// Each user message is a statement (about 10 tokens, 7 when shrunk to subject and value),
    /// so 40 of them take 300–400 tokens: the budget leaves room for the agent's literals too.
    #[test]
    fn literals_fold_into_counts_keeping_user_and_recent_ones() {
        let budget = 600;
        let mut global: Option<Summary> = None;
        for round in 0..40 {
            let mut parts: Vec<Summary> = global.take().into_iter().collect();
            let noise: String = (0..25)
                .map(|k| format!("/srv/out/r{round}/file-{k}.csv "))
                .collect();
            parts.push(extract_summary(
                2 * round + 1,
                Role::Assistant,
                &format!("Wrote {noise}"),
            ));
            parts.push(extract_summary(
                2 * round + 2,
                Role::User,
                &format!("Use ticket OPS-{round:04} for this."),
            ));
            let refs: Vec<&Summary> = parts.iter().collect();
            let (text, tokens) =
                fold_summaries(&refs, None, Detail::Deep, budget, &EstimateCounter);
            assert!(tokens <= budget, "round {round}: {tokens} > {budget}");
            global = Some(summary(0, text, Strategy::Extract));
        }
        let text = global.map(|g| g.text).unwrap_or_default();
        for round in 0..40 {
            assert!(
                text.contains(&format!("OPS-{round:04}")),
                "user literal {round} lost:\n{text}"
            );
        }
        assert!(
            text.contains("/srv/out/r39/file-24.csv"),
            "newest first:\n{text}"
        );
        assert!(!text.contains("/srv/out/r0/file-0.csv"));
        let folded = text
            .lines()
            .find_map(|l| l.strip_prefix("- folded literals: path×"))
            .and_then(|n| n.split(',').next())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
        assert!(folded > 500, "dropped paths are counted: {folded}\n{text}");
    }

    /// Defect a: folding kept only the extract headings' bullets of model-written summaries.
    #[test]
    fn folding_keeps_model_written_sections() {
        let llm = "## Goal\nReconcile the Q3 invoices of ACC-77.\n\n## Completed work\n- Loaded all 14 ledger files.\n- Matched 9,812 of 9,830 rows.\n\n## Current state\nEighteen rows differ by 0.01 EUR rounding.\n\n## Key decisions\n- Round half-even, as the ledger does.\n\n## Next step\nWrite the variance note for finance.\n\n## Constraints\n- Never edit the ledger export.\n";
        let structured = "## Goal\nReconcile Q3.\n\n## Completed work\n- Checked the FX table.\n\n## Current state\nFX rates come from the ECB feed.\n\n## Key decisions\n- Use the ECB reference rate.\n\n## Next step\nNone.\n\n## Constraints\n- Only EUR accounts.\n\n## Literals\n- fx_rates_2026q3\n";
        let a = summary(0, llm.into(), Strategy::Llm);
        let b = summary(1, structured.into(), Strategy::Llm);
        let (text, tokens) = fold_summaries(&[&a, &b], None, Detail::Deep, 2_000, &EstimateCounter);
        assert!(tokens <= 2_000);
        for keep in [
            "Reconcile the Q3 invoices of ACC-77.",
            "Loaded all 14 ledger files.",
            "Matched 9,812 of 9,830 rows.",
            "Eighteen rows differ by 0.01 EUR rounding.",
            "Round half-even, as the ledger does.",
            "Write the variance note for finance.",
            "Never edit the ledger export.",
            "Checked the FX table.",
            "FX rates come from the ECB feed.",
            "Use the ECB reference rate.",
            "Only EUR accounts.",
            "fx_rates_2026q3",
        ] {
            assert!(text.contains(keep), "{keep} lost in\n{text}");
        }
        assert_eq!(
            fold_strategy([Strategy::Llm, Strategy::Llm], Strategy::Extract),
            Strategy::Llm
        );
        assert_eq!(
            fold_strategy([Strategy::Llm, Strategy::Structured], Strategy::Extract),
            Strategy::Extract
        );
    }
}
