//! Which figures of an answer the tenth man recomputes: the ones no output holds, the ones the
//! analyst marked, and the answer's headline figures (those of its first sentence that states
//! any), in the answer's order and at most [`MAX_FIGURES`].

use crate::error::{Result, RuntimeError};
use crate::figures::{FigureCheck, FigureStatus, NumbersReport};

/// The most figures one recompute review works out again: each takes its own requests.
pub const MAX_FIGURES: usize = 8;

/// Why a figure was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Why {
    /// No output held it (or the analyst vouched for it, marked it an estimate or typed
    /// another value: the tenth man checks those too).
    Unsupported,
    /// The analyst marked it.
    Marked,
    /// It is a figure of the answer's first sentence that states any.
    Headline,
}

/// A figure to recompute, with its number in the answer's list (from 1).
#[derive(Debug, Clone)]
pub(super) struct Chosen {
    pub number: u32,
    pub figure: FigureCheck,
    pub why: Why,
}

/// The figures of `report` to recompute. `marked` are numbers in the answer's list; one that
/// is not there is refused with the list's length.
pub(super) fn choose(report: &NumbersReport, marked: &[u32]) -> Result<Vec<Chosen>> {
    let count = report.figures.len();
    if let Some(bad) = marked.iter().find(|&&n| n == 0 || n as usize > count) {
        return Err(RuntimeError::Config(format!(
            "figure {bad} is not in the answer, which states {count} figures: `decima execution \
             numbers` lists them by number"
        )));
    }
    let headline_sentence = report.figures.first().map(|f| f.sentence.as_str());
    let mut chosen: Vec<Chosen> = Vec::new();
    for (i, figure) in report.figures.iter().enumerate() {
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let why = if !matches!(figure.status, FigureStatus::Linked | FigureStatus::Derived) {
            Why::Unsupported
        } else if marked.contains(&number) {
            Why::Marked
        } else if Some(figure.sentence.as_str()) == headline_sentence {
            Why::Headline
        } else {
            continue;
        };
        chosen.push(Chosen {
            number,
            figure: figure.clone(),
            why,
        });
    }
    // Within the limit, the analyst's marks and the unsupported figures come before headlines.
    if chosen.len() > MAX_FIGURES {
        chosen.sort_by_key(|c| (c.why == Why::Headline, c.number));
        chosen.truncate(MAX_FIGURES);
        chosen.sort_by_key(|c| c.number);
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(text: &str, sentence: &str, status: FigureStatus) -> FigureCheck {
        FigureCheck {
            text: text.into(),
            start: 0,
            end: 0,
            sentence: sentence.into(),
            subject: String::new(),
            status,
            source: None,
            derivation: None,
            recomputed: None,
        }
    }

    fn report(figures: Vec<FigureCheck>) -> NumbersReport {
        NumbersReport {
            conversation_id: String::new(),
            message_seq: 9,
            figures,
            reports: Vec::new(),
            ledger_entries: 0,
            ledger_sources: 0,
        }
    }

    #[test]
    fn the_unsupported_the_marked_and_the_headline_figures_are_chosen_in_order() {
        let r = report(vec![
            figure("1", "Revenue was 1 and 2.", FigureStatus::Linked),
            figure("2", "Revenue was 1 and 2.", FigureStatus::Derived),
            figure("3", "Costs were 3.", FigureStatus::Linked),
            figure("4", "West made 4.", FigureStatus::Unlinked),
            figure("5", "Tax was 5.", FigureStatus::Accepted),
            figure("6", "Margin was 6.", FigureStatus::Linked),
        ]);
        let chosen = choose(&r, &[6]).unwrap();
        let picked: Vec<(u32, Why)> = chosen.iter().map(|c| (c.number, c.why)).collect();
        assert_eq!(
            picked,
            [
                (1, Why::Headline),
                (2, Why::Headline),
                (4, Why::Unsupported),
                (5, Why::Unsupported),
                (6, Why::Marked)
            ]
        );
        let refused = choose(&r, &[7]).unwrap_err().to_string();
        assert!(refused.contains("states 6 figures"), "{refused}");
    }

    #[test]
    fn beyond_the_limit_headlines_give_way_to_marked_and_unsupported_figures() {
        let mut figures: Vec<FigureCheck> = (0..6)
            .map(|i| figure(&i.to_string(), "Headline.", FigureStatus::Linked))
            .collect();
        figures.extend((0..6).map(|i| figure(&i.to_string(), "Other.", FigureStatus::Unlinked)));
        let chosen = choose(&report(figures), &[]).unwrap();
        assert_eq!(chosen.len(), MAX_FIGURES);
        assert_eq!(
            chosen.iter().filter(|c| c.why == Why::Unsupported).count(),
            6
        );
        assert!(chosen.windows(2).all(|w| w[0].number < w[1].number));
    }
}
