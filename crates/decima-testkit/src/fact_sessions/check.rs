//! Whether a summary kept a statement: its value, whole, next to something that says what the
//! value is.
//!
//! The rules, on the summary's text after whitespace normalisation (runs of spaces, tabs,
//! no-break and narrow no-break spaces count as one space; nothing else is forgiven):
//!
//! - The value must appear whole and as a token: `15` is not found in `150` or `0.15`.
//! - Next to it must be one of the fact's subject phrases (case-insensitive, as words, a plural
//!   `s` allowed), outside the value itself. "Next to" means: the same line; or the same list
//!   item (`- `, `* `, `• `, `1. `, with its indented continuation lines); or a `Label:` line
//!   immediately above the line or item.
//! - A table cell also needs its row key there; or else the value and row key on a line with a
//!   header line naming the column at most ten lines above, in the same block (no blank line
//!   between).
//! - A correction is lost if any line presents the old value with the subject and without the
//!   new one: "threshold 12" is stale, "threshold 15 (was 12)" is fine.

use std::fmt;

use super::{Fact, FactKind};

/// What became of one statement in a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The value survives next to its subject (and, for a correction, nothing presents the old
    /// value as current).
    Kept,
    /// The value is nowhere in the text.
    ValueMissing,
    /// The value is there, but nowhere next to anything saying what it is.
    SubjectLost,
    /// The old value of a correction is presented with its subject as if it were current.
    Stale,
    /// A value with inner spaces survives only as a prefix (`DE89` of an IBAN).
    Truncated,
}

impl Verdict {
    /// Whether the statement survived.
    pub fn is_kept(self) -> bool {
        self == Verdict::Kept
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Kept => "kept",
            Verdict::ValueMissing => "value missing",
            Verdict::SubjectLost => "subject lost",
            Verdict::Stale => "stale value",
            Verdict::Truncated => "truncated",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Checks one fact against a summary's text. For many facts against one text use [`score`],
/// which prepares the text once.
pub fn statement_kept(text: &str, fact: &Fact) -> Verdict {
    Text::new(text).judge(fact).0
}

/// Recall of one kind of fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindRecall {
    /// The kind.
    pub kind: FactKind,
    /// How many of this kind were kept.
    pub kept: usize,
    /// How many of this kind there were.
    pub total: usize,
}

/// A fact a summary lost, and why, so a failing test says what to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostFact {
    /// The fact's id.
    pub id: String,
    /// Its kind.
    pub kind: FactKind,
    /// Why it counts as lost.
    pub verdict: Verdict,
    /// The first of its subject phrases.
    pub subject: String,
    /// Its value.
    pub value: String,
    /// The value a correction replaced.
    pub replaced: Option<String>,
    /// The summary line behind the verdict (the stale line, the line with the bare value or the
    /// truncated prefix), if any.
    pub evidence: Option<String>,
}

/// How many statements a summary kept, per kind, and which it lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scorecard {
    /// Facts kept.
    pub kept: usize,
    /// Facts checked.
    pub total: usize,
    /// Recall per kind, for every kind present, in [`FactKind::ALL`] order.
    pub per_kind: Vec<KindRecall>,
    /// Every lost fact, in the order given.
    pub lost: Vec<LostFact>,
}

impl Scorecard {
    /// The share of facts kept (1.0 when there were none).
    pub fn recall(&self) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            self.kept as f64 / self.total as f64
        }
    }

    /// The share of facts of `kind` kept, or `None` if there were none of that kind.
    pub fn recall_of(&self, kind: FactKind) -> Option<f64> {
        self.per_kind
            .iter()
            .find(|k| k.kind == kind && k.total > 0)
            .map(|k| k.kept as f64 / k.total as f64)
    }
}

impl fmt::Display for Scorecard {
    /// A table of recall per kind, then one line per lost fact.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<16} {:>5} {:>6} {:>7}",
            "kind", "kept", "total", "recall"
        )?;
        for k in &self.per_kind {
            let pct = if k.total == 0 {
                100.0
            } else {
                k.kept as f64 * 100.0 / k.total as f64
            };
            writeln!(
                f,
                "{:<16} {:>5} {:>6} {:>6.0}%",
                k.kind.name(),
                k.kept,
                k.total,
                pct
            )?;
        }
        writeln!(
            f,
            "{:<16} {:>5} {:>6} {:>6.0}%",
            "all",
            self.kept,
            self.total,
            self.recall() * 100.0
        )?;
        if !self.lost.is_empty() {
            writeln!(f, "lost:")?;
        }
        for l in &self.lost {
            write!(
                f,
                "  {:<22} {:<13} {:?} = {:?}",
                l.id,
                l.verdict.name(),
                l.subject,
                l.value
            )?;
            if let Some(old) = &l.replaced {
                write!(f, " (was {old:?})")?;
            }
            if let Some(line) = &l.evidence {
                let short: String = line.chars().take(90).collect();
                write!(f, " | line: {short:?}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// Checks every fact against one text: recall per kind and the lost facts with reasons.
pub fn score(text: &str, facts: &[Fact]) -> Scorecard {
    let prepared = Text::new(text);
    let mut per_kind: Vec<KindRecall> = FactKind::ALL
        .iter()
        .map(|&kind| KindRecall {
            kind,
            kept: 0,
            total: 0,
        })
        .collect();
    let mut lost = Vec::new();
    let mut kept = 0;
    for fact in facts {
        let (verdict, evidence) = prepared.judge(fact);
        if let Some(k) = per_kind.iter_mut().find(|k| k.kind == fact.kind) {
            k.total += 1;
            k.kept += usize::from(verdict.is_kept());
        }
        if verdict.is_kept() {
            kept += 1;
        } else {
            lost.push(LostFact {
                id: fact.id.clone(),
                kind: fact.kind,
                verdict,
                subject: fact.subject.first().cloned().unwrap_or_default(),
                value: fact.value.clone(),
                replaced: fact.replaced.clone(),
                evidence,
            });
        }
    }
    per_kind.retain(|k| k.total > 0);
    Scorecard {
        kept,
        total: facts.len(),
        per_kind,
        lost,
    }
}

/// Runs of spaces, tabs and the no-break spaces become one space; carriage returns go.
fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        let c = match c {
            '\r' => continue,
            '\t' | '\u{a0}' | '\u{202f}' | '\u{2007}' | '\u{2009}' | '\u{200a}' | '\u{3000}' => ' ',
            c => c,
        };
        if c == ' ' {
            if space {
                continue;
            }
            space = true;
        } else {
            space = false;
        }
        out.push(c);
    }
    out
}

/// Whether the line around `hay[start..end]` is a CSV record (no spaces, two or more commas),
/// where a comma separates fields rather than thousands.
fn in_csv_record(hay: &str, start: usize, end: usize) -> bool {
    let from = hay[..start].rfind('\n').map_or(0, |i| i + 1);
    let to = hay[end..].find('\n').map_or(hay.len(), |i| end + i);
    let line = &hay[from..to];
    !line.contains(' ') && line.matches(',').count() >= 2
}

/// Whether `hay[start..end]` stands as a token: a value starting or ending with a letter or
/// digit must not run on into another (`15` in `150`, `0.15` or `15,000` is not `15`, except in
/// a CSV record); a version's `v` prefix is allowed.
fn bounded(hay: &str, start: usize, end: usize) -> bool {
    let needle = &hay[start..end];
    let (Some(first), Some(last)) = (needle.chars().next(), needle.chars().next_back()) else {
        return false;
    };
    if first.is_ascii_alphanumeric() {
        let mut before = hay[..start].chars().rev();
        let (p, q) = (before.next(), before.next());
        let runs_on = match p {
            Some('v' | 'V') => {
                !first.is_ascii_digit() || q.is_some_and(|q| q.is_ascii_alphanumeric())
            }
            Some(p) if p.is_ascii_alphanumeric() => true,
            Some('.') => first.is_ascii_digit() && q.is_some_and(|q| q.is_ascii_digit()),
            Some(',') => {
                first.is_ascii_digit()
                    && q.is_some_and(|q| q.is_ascii_digit())
                    && !in_csv_record(hay, start, end)
            }
            _ => false,
        };
        if runs_on {
            return false;
        }
    }
    if last.is_ascii_alphanumeric() {
        let mut after = hay[end..].chars();
        let (n, m) = (after.next(), after.next());
        let runs_on = match n {
            Some(n) if n.is_ascii_alphanumeric() => true,
            Some('.') => last.is_ascii_digit() && m.is_some_and(|m| m.is_ascii_digit()),
            Some(',') => {
                last.is_ascii_digit()
                    && m.is_some_and(|m| m.is_ascii_digit())
                    && !in_csv_record(hay, start, end)
            }
            _ => false,
        };
        if runs_on {
            return false;
        }
    }
    true
}

/// Whether `phrase` (lowercase) occurs in `hay` (lowercase) as words, allowing a plural.
fn has_phrase(hay: &str, phrase: &str) -> bool {
    let (Some(first), Some(last)) = (phrase.chars().next(), phrase.chars().next_back()) else {
        return false;
    };
    hay.match_indices(phrase).any(|(i, _)| {
        if first.is_ascii_alphanumeric()
            && hay[..i]
                .chars()
                .next_back()
                .is_some_and(|p| p.is_ascii_alphanumeric())
        {
            return false;
        }
        if !last.is_ascii_alphanumeric() {
            return true;
        }
        let rest = &hay[i + phrase.len()..];
        let rest = rest
            .strip_prefix("es")
            .filter(|r| !r.starts_with(|c: char| c.is_ascii_alphanumeric()))
            .or_else(|| rest.strip_prefix('s'))
            .unwrap_or(rest);
        !rest.starts_with(|c: char| c.is_ascii_alphanumeric())
    })
}

fn is_item_start(line: &str) -> bool {
    let t = line.trim_start();
    if ["- ", "* ", "• ", "+ "].iter().any(|m| t.starts_with(m)) {
        return true;
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") "))
}

fn is_continuation(line: &str) -> bool {
    line.starts_with(' ') && !line.trim().is_empty() && !is_item_start(line)
}

/// A summary's text, normalised and split into lines once.
struct Text {
    norm: String,
    /// Byte offset where each line starts.
    starts: Vec<usize>,
}

impl Text {
    fn new(raw: &str) -> Self {
        let norm = normalize(raw);
        let mut starts = vec![0];
        starts.extend(norm.match_indices('\n').map(|(i, _)| i + 1));
        Self { norm, starts }
    }

    fn line(&self, i: usize) -> &str {
        let end = self.starts.get(i + 1).map_or(self.norm.len(), |&e| e - 1);
        &self.norm[self.starts[i]..end]
    }

    /// The lines holding `value` as a token, each once, in order.
    fn value_lines(&self, value: &str) -> Vec<usize> {
        let mut lines: Vec<usize> = Vec::new();
        if value.is_empty() {
            return lines;
        }
        for (off, _) in self.norm.match_indices(value) {
            if !bounded(&self.norm, off, off + value.len()) {
                continue;
            }
            let line = self.starts.partition_point(|&s| s <= off) - 1;
            if lines.last() != Some(&line) {
                lines.push(line);
            }
        }
        lines
    }

    /// The lines that count as "next to" line `i`: its list item, and a `Label:` line above.
    fn unit(&self, i: usize) -> Vec<usize> {
        let mut start = i;
        if is_continuation(self.line(i)) {
            let mut j = i;
            while j > 0 && is_continuation(self.line(j - 1)) {
                j -= 1;
            }
            if j > 0 && is_item_start(self.line(j - 1)) {
                start = j - 1;
            }
        }
        let mut lines = Vec::new();
        if start > 0 {
            let above = self.line(start - 1).trim_end();
            if above.ends_with(':') || above.ends_with('：') {
                lines.push(start - 1);
            }
        }
        if is_item_start(self.line(start)) {
            let mut end = start;
            while end + 1 < self.starts.len() && is_continuation(self.line(end + 1)) {
                end += 1;
            }
            lines.extend(start..=end);
        } else {
            lines.push(i);
        }
        lines
    }

    /// Whether any of `lines`, with `value` blanked out, contains any of `phrases`.
    fn names(&self, lines: &[usize], value: &str, phrases: &[String]) -> bool {
        lines.iter().any(|&l| {
            let hay = self.line(l).replace(value, "\u{1}").to_lowercase();
            phrases
                .iter()
                .any(|p| has_phrase(&hay, &normalize(p).trim().to_lowercase()))
        })
    }

    /// Whether any of `lines` holds `value` as a token.
    fn holds(&self, lines: &[usize], value: &str) -> bool {
        lines.iter().any(|&l| {
            let line = self.line(l);
            line.match_indices(value)
                .any(|(i, _)| bounded(line, i, i + value.len()))
        })
    }

    /// Whether the value on line `i` is tied to the fact's subject (and row).
    fn about(&self, i: usize, fact: &Fact, value: &str) -> bool {
        let unit = self.unit(i);
        let row: Vec<String> = fact.row.iter().cloned().collect();
        let row_ok = |lines: &[usize]| row.is_empty() || self.names(lines, value, &row);
        if self.names(&unit, value, &fact.subject) && row_ok(&unit) {
            return true;
        }
        if fact.kind != FactKind::TableCell || !row_ok(&[i]) {
            return false;
        }
        // A header naming the column above, in the same block.
        let mut j = i;
        while j > 0 && i - j < 10 {
            j -= 1;
            if self.line(j).trim().is_empty() {
                return false;
            }
            if self.names(&[j], value, &fact.subject) {
                return true;
            }
        }
        false
    }

    /// The verdict, with the line behind it.
    fn judge(&self, fact: &Fact) -> (Verdict, Option<String>) {
        let value = normalize(&fact.value).trim().to_string();
        if let Some(old) = &fact.replaced {
            let old = normalize(old).trim().to_string();
            for i in self.value_lines(&old) {
                if self.about(i, fact, &old) && !self.holds(&self.unit(i), &value) {
                    return (Verdict::Stale, Some(self.line(i).to_string()));
                }
            }
        }
        let lines = self.value_lines(&value);
        if lines.iter().any(|&i| self.about(i, fact, &value)) {
            return (Verdict::Kept, None);
        }
        if let Some(&i) = lines.first() {
            return (Verdict::SubjectLost, Some(self.line(i).to_string()));
        }
        let words: Vec<&str> = value.split(' ').collect();
        for k in (1..words.len()).rev() {
            let prefix = words[..k].join(" ");
            if prefix.chars().filter(|c| *c != ' ').count() < 4 {
                break;
            }
            if let Some(&i) = self.value_lines(&prefix).first() {
                return (Verdict::Truncated, Some(self.line(i).to_string()));
            }
        }
        (Verdict::ValueMissing, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_bounded() {
        let t = "15 150 0.15 15,000 v2.2.3 x15";
        let hits: Vec<usize> = t
            .match_indices("15")
            .filter(|(i, _)| bounded(t, *i, i + 2))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(hits, vec![0]);
        assert!(bounded("pandas v2.2.3", 8, 13));
        assert!(bounded("A-1,Pro,111,695.96,2026-09-19", 8, 11));
        assert!(!bounded("seats 111,695", 6, 9));
        assert!(!bounded("dev2.2.3", 3, 8));
    }

    #[test]
    fn phrases_are_words_with_plurals() {
        assert!(has_phrase("the refunds window", "refund"));
        assert!(!has_phrase("because", "auc"));
        assert!(has_phrase("rows_dropped: 3", "dropped"));
        assert!(has_phrase("流失窗口是 45 天", "流失窗口"));
    }

    #[test]
    fn spaces_are_normalised() {
        assert_eq!(
            normalize("1\u{202f}234\u{a0}\u{a0}567\t€\r\n"),
            "1 234 567 €\n"
        );
    }
}
