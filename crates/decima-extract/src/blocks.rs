//! The parts of a message read as output rather than as sentences: fenced code blocks (their
//! `label = value` lines, JSON and tables) and Markdown tables. What they state becomes labelled
//! statements and table rows; their lines are then left out of the sentence statements, so a
//! table row is not also taken for a clause.

use super::labels::{Labelled, read_output};
use super::tables::table_at;
use super::values::Span;

/// What a message's blocks hold.
#[derive(Debug, Default)]
pub(super) struct Blocks {
    /// Byte ranges of the blocks, sorted.
    pub(super) ranges: Vec<Span>,
    /// The statements read from them.
    pub(super) facts: Vec<Labelled>,
}

impl Blocks {
    /// Whether byte `pos` of the message lies in a block.
    pub(super) fn contains(&self, pos: usize) -> bool {
        let k = self.ranges.partition_point(|&(s, _)| s <= pos);
        k > 0 && pos < self.ranges[k - 1].1
    }
}

fn fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// Finds the fenced code blocks and Markdown tables of `text` and reads them.
pub(super) fn blocks(text: &str) -> Blocks {
    let mut out = Blocks::default();
    if !text.contains("```") && !text.contains("~~~") && !text.contains('|') {
        return out;
    }
    // Lines with their byte offsets.
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut at = 0;
    for l in text.split_inclusive('\n') {
        lines.push((at, l.trim_end_matches(['\n', '\r'])));
        at += l.len();
    }
    let mut i = 0;
    while i < lines.len() {
        let (start, line) = lines[i];
        if fence(line) {
            let mut j = i + 1;
            while j < lines.len() && !fence(lines[j].1) {
                j += 1;
            }
            let body_start = lines.get(i + 1).map_or(text.len(), |l| l.0);
            let body_end = lines.get(j).map_or(text.len(), |l| l.0);
            if body_start < body_end {
                out.facts.extend(read_output(&text[body_start..body_end]));
            }
            let end = lines.get(j + 1).map_or(text.len(), |l| l.0);
            out.ranges.push((start, end));
            i = j + 1;
            continue;
        }
        if line.trim_start().starts_with('|') {
            let mut j = i;
            while j < lines.len() && lines[j].1.trim_start().starts_with('|') {
                j += 1;
            }
            let table: Vec<&str> = lines[i..j].iter().map(|l| l.1).collect();
            if let Some((_, _)) = table_at(&table, 0) {
                out.facts.extend(read_output(&table.join("\n")));
                let end = lines.get(j).map_or(text.len(), |l| l.0);
                out.ranges.push((start, end));
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_and_tables_in_messages() {
        let text = "Here is the config:\n```python\nCHURN_WINDOW_DAYS = 45\nMIN_TENURE = \"3 months\"\n```\nand the numbers:\n| tier | churn |\n|---|---|\n| Basic | 4.2% |\nThat's all.";
        let b = blocks(text);
        let facts: Vec<&str> = b.facts.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(
            facts,
            vec![
                "CHURN_WINDOW_DAYS: 45",
                "MIN_TENURE: 3 months",
                "tier Basic: churn 4.2%"
            ]
        );
        let at = |s: &str| text.find(s).unwrap();
        assert!(b.contains(at("CHURN")));
        assert!(b.contains(at("| Basic")));
        assert!(!b.contains(at("and the numbers")));
        assert!(!b.contains(at("That's all")));
        assert!(blocks("a | b, no table").facts.is_empty());
    }
}
