//! Decision and constraint sentences that differ only in their numbers, hashes or ids ("Only
//! count rows of batch 4", "… batch 8 …", "OK, we'll rerun batch 12."), grouped by shape as
//! repeated operations are, so they cannot fill their section and push the distinct
//! constraints and decisions out of the budget.
//!
//! A shape with more than [`MAX_VARIANT_LINES`] variants is one of two things:
//! - A recurring instruction: its variants are stated again and again (on average at least
//!   [`RECURRING`] times each), as when a user says "Continue with batch N; …" every few
//!   messages. Only the newest is current: the shape becomes one line, the newest sentence
//!   verbatim with the count, `<newest> (×S, newest of V variants)`: stated S times in V
//!   variants. A shape an earlier summary already shows as recurring (such a line, or a shape
//!   in [`Digest::recurring`](super::Digest::recurring)) stays one line from two variants on,
//!   even in a range too short to see it recur.
//! - A list of one-off statements, e.g. "Decision: treat batch 17 as a duplicate" for one batch
//!   after another: each is a fact of its own. The newest keeps its rank; the older ones are
//!   listed verbatim too, but ranked after the todos and recent operations, so they only use
//!   room the distinct items leave.
//!
//! A grouped line parses back as one item that counts as its S statements and V variants when
//! grouped again, so a summary folded again renders the same line and newer variants add to its
//! counts. As for operations, the variants are counted per range, so a variant stated again in a
//! later range counts again. The exact values of older variants are not lost where they matter:
//! literals (ids, decimals, paths) stay in the literal sections.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::operations::{MAX_VARIANT_LINES, shape_of};

/// A shape whose variants were stated at least this many times each, on average, recurs.
const RECURRING: u64 = 2;

const COUNT_OPEN: &str = " (×";
const NEWEST_OF: &str = ", newest of ";
const VARIANTS: &str = " variants)";

/// How a decision or constraint row is rendered and ranked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum RowKind {
    /// One sentence, ranked with the distinct decisions and constraints.
    Single,
    /// A recurring instruction: the newest sentence without any counts, how many times the
    /// shape was stated, and in how many variants.
    Recurring {
        newest: String,
        stated: u64,
        variants: u64,
    },
    /// An older one-off variant of a shape with many: listed, but ranked lower.
    Older,
}

/// One rendered decision or constraint: a sentence, or a recurring shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StatementRow {
    /// Position among the rows: the index of the newest sentence it stands for.
    pub(super) key: u64,
    /// The indices of the sentences it stands for, oldest first.
    pub(super) members: Vec<usize>,
    pub(super) kind: RowKind,
}

/// The text of a recurring instruction's line.
pub(super) fn grouped_line(newest: &str, stated: u64, variants: u64) -> String {
    format!("{newest}{COUNT_OPEN}{stated}{NEWEST_OF}{variants}{VARIANTS}")
}

/// Splits a recurring instruction's line into its sentence, statements and variants; any other
/// sentence is itself, stated once.
pub(super) fn split_grouped(s: &str) -> (&str, u64, u64) {
    let parsed = s.strip_suffix(VARIANTS).and_then(|h| {
        let (h, variants) = h.rsplit_once(NEWEST_OF)?;
        let (base, stated) = h.rsplit_once(COUNT_OPEN)?;
        let (stated, variants) = (stated.parse::<u64>().ok()?, variants.parse::<u64>().ok()?);
        (!base.is_empty() && variants >= 1 && stated >= variants)
            .then_some((base, stated, variants))
    });
    parsed.unwrap_or((s, 1, 1))
}

/// The shapes of the recurring instructions a summary's text shows, so a later range can treat
/// their new variants as more of the same instruction.
pub(super) fn recurring_shapes(text: &str) -> impl Iterator<Item = String> + '_ {
    text.lines().filter_map(|line| {
        let item = line.trim().strip_prefix("- ")?;
        let (base, _, variants) = split_grouped(item);
        (variants > 1).then(|| shape_of(base))
    })
}

/// The rows a list of sentences (in the order of their last statement) renders as, in list
/// order; `stated` holds how often a sentence was stated when more than once, `recurring` the
/// shapes known to recur. Grouping depends only on these, so rendering is deterministic.
pub(super) fn statement_rows(
    list: &[String],
    stated: &BTreeMap<String, u64>,
    recurring: &BTreeSet<String>,
) -> Vec<StatementRow> {
    struct Group {
        members: Vec<usize>,
        times: u64,
        variants: u64,
        /// Whether a member is already a recurring line, or the shape is known to recur.
        known: bool,
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for (i, s) in list.iter().enumerate() {
        let (base, times, variants) = split_grouped(s);
        let times = times.max(stated.get(s).copied().unwrap_or(1));
        let shape = shape_of(base);
        let g = match at.get(&shape) {
            Some(&g) => g,
            None => {
                groups.push(Group {
                    members: Vec::new(),
                    times: 0,
                    variants: 0,
                    known: recurring.contains(&shape),
                });
                at.insert(shape, groups.len() - 1);
                groups.len() - 1
            }
        };
        let group = &mut groups[g];
        group.members.push(i);
        group.times += times;
        group.variants += variants;
        group.known |= variants > 1;
    }
    let mut rows = Vec::new();
    for Group {
        members,
        times,
        variants,
        known,
    } in groups
    {
        let Some(&newest) = members.last() else {
            continue;
        };
        let recurs = (known && variants >= 2)
            || (variants > MAX_VARIANT_LINES && times >= variants.saturating_mul(RECURRING));
        if !recurs && variants <= MAX_VARIANT_LINES {
            rows.extend(members.into_iter().map(|i| StatementRow {
                key: i as u64,
                members: vec![i],
                kind: RowKind::Single,
            }));
        } else if recurs {
            let (base, _, _) = split_grouped(&list[newest]);
            rows.push(StatementRow {
                key: newest as u64,
                members,
                kind: RowKind::Recurring {
                    newest: base.to_string(),
                    stated: times,
                    variants,
                },
            });
        } else {
            rows.extend(members.into_iter().map(|i| StatementRow {
                key: i as u64,
                members: vec![i],
                kind: if i == newest {
                    RowKind::Single
                } else {
                    RowKind::Older
                },
            }));
        }
    }
    rows.sort_by_key(|r| r.key);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EstimateCounter;
    use crate::{Detail, Digest, Speaker, src};

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn shapes_group_when_they_recur_and_rank_lower_when_one_off() {
        let list = strings(&[
            "Never touch prod.",
            "Only count batch 1.",
            "Only count batch 2.",
            "Exclude batch 17.",
            "Only count batch 3.",
            "Exclude batch 4242.",
            "Exclude batch 9.",
            "Only count batch 40.",
            "Exclude batch 77.",
            "Rerun batch 7.",
        ]);
        let stated: BTreeMap<String, u64> = [
            ("Only count batch 1.".to_string(), 3),
            ("Only count batch 2.".to_string(), 2),
            ("Only count batch 3.".to_string(), 2),
        ]
        .into_iter()
        .collect();
        let rows = statement_rows(&list, &stated, &BTreeSet::new());
        let shown: Vec<(u64, Vec<usize>, RowKind)> = rows
            .into_iter()
            .map(|r| (r.key, r.members, r.kind))
            .collect();
        assert_eq!(
            shown,
            vec![
                (0, vec![0], RowKind::Single),
                (3, vec![3], RowKind::Older),
                (5, vec![5], RowKind::Older),
                (6, vec![6], RowKind::Older),
                (
                    7,
                    vec![1, 2, 4, 7],
                    RowKind::Recurring {
                        newest: "Only count batch 40.".into(),
                        stated: 8,
                        variants: 4
                    }
                ),
                (8, vec![8], RowKind::Single),
                (9, vec![9], RowKind::Single),
            ]
        );
        let line = grouped_line("Only count batch 40.", 8, 4);
        assert_eq!(line, "Only count batch 40. (×8, newest of 4 variants)");
        assert_eq!(split_grouped(&line), ("Only count batch 40.", 8, 4));
        for plain in [
            "Keep (×x, newest of 2 variants)",
            "Keep (×1, newest of 2 variants)",
            " (×3, newest of 2 variants)",
        ] {
            assert_eq!(split_grouped(plain), (plain, 1, 1));
        }
    }

    #[test]
    fn recurring_lines_round_trip_and_merge_with_newer_variants() {
        let mut sources = vec![src(Speaker::User, "Goal: scan the batches.")];
        let texts: Vec<String> = (0..40)
            .map(|i| format!("Only count rows of batch {} with an id.", i % 10))
            .collect();
        sources.extend(texts.iter().map(|t| src(Speaker::User, t)));
        sources.push(src(
            Speaker::User,
            "Never send the export outside the team.",
        ));
        let d = Digest::from_sources(sources);
        assert_eq!(d.constraints.len(), 11, "{:?}", d.constraints);
        let text = d.render(Detail::Standard);
        assert!(
            text.contains(
                "- Only count rows of batch 9 with an id. (×40, newest of 10 variants)\n"
            ),
            "{text}"
        );
        assert_eq!(text.matches("Only count rows").count(), 1, "{text}");
        assert!(text.contains("- Never send the export outside the team.\n"));
        let back = Digest::parse(&text);
        assert_eq!(back.render(Detail::Standard), text, "stable when folded");

        // A restated variant is the newest; newer variants add to the counts.
        let later = Digest::from_continuation([
            src(Speaker::User, "Only count rows of batch 3 with an id."),
            src(Speaker::User, "Only count rows of batch 11 with an id."),
            src(Speaker::User, "Only count rows of batch 3 with an id."),
        ]);
        let mut merged = back;
        merged.merge(later);
        let again = merged.render(Detail::Deep);
        assert!(
            again.contains(
                "- Only count rows of batch 3 with an id. (×43, newest of 12 variants)\n"
            ),
            "{again}"
        );
        assert_eq!(again.matches("Only count rows").count(), 1, "{again}");

        // What does not fit is handed on whole, counts included.
        let (small, _, rest) = d.render_budgeted_spill(Detail::Standard, 30, &EstimateCounter);
        assert!(!small.contains("Only count rows"), "{small}");
        assert_eq!(rest.constraints.len(), 10, "{:?}", rest.constraints);
        assert!(
            rest.render(Detail::Standard).contains(
                "- Only count rows of batch 9 with an id. (×40, newest of 10 variants)\n"
            ),
            "{:?}",
            rest
        );

        // A later range going through a few more variants of a known recurring instruction.
        let mut next = Digest::from_continuation([
            src(Speaker::User, "Only count rows of batch 12 with an id."),
            src(Speaker::User, "Only count rows of batch 13 with an id."),
        ]);
        next.recurring_from(&text);
        let next_text = next.render(Detail::Standard);
        assert_eq!(
            next_text,
            "## Constraints\n- Only count rows of batch 13 with an id. (×2, newest of 2 variants)\n"
        );
    }

    #[test]
    fn one_off_variants_are_kept_but_yield_to_distinct_items() {
        let mut sources = vec![src(Speaker::User, "Goal: dedupe the ledger.")];
        let texts: Vec<String> = (0..60)
            .map(|i| format!("Decision: treat batch {} as a duplicate.", 1_000 + i * 37))
            .collect();
        sources.push(src(
            Speaker::Assistant,
            "Decision: keep the EU ledger only.",
        ));
        sources.extend(texts.iter().map(|t| src(Speaker::Assistant, t)));
        let d = Digest::from_sources(sources);
        let whole = d.render(Detail::Standard);
        for t in &texts {
            assert!(whole.contains(t.as_str()), "{t} lost in\n{whole}");
        }
        assert!(!whole.contains("variants)"), "{whole}");
        let (small, tokens) = d.render_budgeted(Detail::Standard, 120, &EstimateCounter);
        assert!(tokens <= 120, "{tokens}");
        for keep in [
            "Decision: keep the EU ledger only.",
            "Decision: treat batch 3183 as a duplicate.",
        ] {
            assert!(small.contains(keep), "{keep} lost in\n{small}");
        }
    }
}
