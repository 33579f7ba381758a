//! The ledger: every figure a conversation's sources gave, sorted by magnitude so that the
//! figures near a value are found by binary search, 100,000 entries or more.

use serde::{Deserialize, Serialize};

use crate::figure::{Scale, Unit};
use crate::reading::{Lines, Located, claims_at_most_about, read_figures_with};
use crate::subject::Subject;

/// Who wrote a source: a figure an analyst typed is theirs to state, never a claim to check.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Origin {
    /// A tool's output.
    Tool,
    /// A file of the workspace.
    File,
    /// The analyst's own message.
    Analyst,
}

/// Where a source's text is: the message that holds it, the tool call it answered, the
/// workspace file it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Source {
    /// Who wrote it.
    pub origin: Origin,
    /// The message it is stored in (for a file: the message of the run that read or wrote it).
    pub message_seq: i64,
    /// The tool call it answered, for a tool's output.
    pub tool_call_id: Option<String>,
    /// The workspace path, for a file.
    pub path: Option<String>,
}

/// One figure of a source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Index of its source in the ledger.
    pub source: u32,
    /// The value, scale applied (12.5 for 12.5%).
    pub value: f64,
    /// Its unit.
    pub unit: Unit,
    /// Its scale.
    pub scale: Scale,
    /// The power of ten of its last digit.
    pub place: i32,
    /// Byte span in the source's text: the text as written is the source's text there.
    pub start: u32,
    /// End of the span.
    pub end: u32,
    /// Its line in the source.
    pub line: u32,
    /// Its column, in a table.
    pub column: Option<u16>,
    /// What it is about.
    pub subject: Subject,
}

impl Entry {
    /// An entry for a located figure of `source`.
    #[must_use]
    pub fn new(source: u32, located: Located) -> Self {
        let f = located.figure;
        Self {
            source,
            value: f.value,
            unit: f.unit,
            scale: f.scale,
            place: f.place,
            start: u32::try_from(f.start).unwrap_or(u32::MAX),
            end: u32::try_from(f.end).unwrap_or(u32::MAX),
            line: located.line,
            column: located.column,
            subject: located.subject,
        }
    }

    /// The value in plain numbers (a percentage as its fraction).
    #[must_use]
    pub fn magnitude(&self) -> f64 {
        match self.unit {
            Unit::Percent => self.value / 100.0,
            _ => self.value,
        }
    }
}

/// From this size on, a text is read in parts on as many cores (at most [`MAX_PARTS`]): the
/// ledger's cost to a run that printed a large table is then a fraction of reading it in one.
const PARALLEL_FROM: usize = 256 * 1024;
/// Parts a text is read in, at most.
const MAX_PARTS: usize = 4;

/// The entries of `text` read in `parts` ranges of its lines: the first into `entries` on this
/// thread, the others each on a thread of its own, appended in the order of the text.
fn read_in_parts(text: &str, source: u32, parts: usize, entries: &mut Vec<Entry>) {
    let lines = Lines::of(text);
    let mut ranges = lines.parts(parts).into_iter();
    let first = ranges.next().unwrap_or(0..0);
    let room = claims_at_most_about(text) / parts;
    let lines = &lines;
    std::thread::scope(|scope| {
        let workers: Vec<_> = ranges
            .map(|range| {
                scope.spawn(move || {
                    let mut part = Vec::with_capacity(room);
                    lines.read(range, |l| part.push(Entry::new(source, l)));
                    part
                })
            })
            .collect();
        lines.read(first, |l| entries.push(Entry::new(source, l)));
        for worker in workers {
            // A worker only reads; one that panicked has a bug that reading alone would hit.
            let part = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            entries.extend(part);
        }
    });
}

/// Collects a ledger's sources and entries; [`LedgerBuilder::build`] sorts them for lookup.
#[derive(Debug, Default)]
pub struct LedgerBuilder {
    sources: Vec<Source>,
    entries: Vec<Entry>,
}

impl LedgerBuilder {
    /// An empty ledger.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a source; its entries name it by the index returned.
    pub fn add_source(&mut self, source: Source) -> u32 {
        self.sources.push(source);
        u32::try_from(self.sources.len() - 1).unwrap_or(u32::MAX)
    }

    /// Reads every claim of `text` into the ledger as figures of `source`; returns how many.
    pub fn add_text(&mut self, source: Source, text: &str) -> usize {
        let id = self.add_source(source);
        let before = self.entries.len();
        self.entries.reserve(claims_at_most_about(text));
        let parts = if text.len() >= PARALLEL_FROM {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_PARTS))
        } else {
            1
        };
        if parts == 1 {
            let entries = &mut self.entries;
            read_figures_with(text, |l| entries.push(Entry::new(id, l)));
        } else {
            read_in_parts(text, id, parts, &mut self.entries);
        }
        self.entries.len() - before
    }

    /// Adds an entry read earlier (from the store).
    pub fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
    }

    /// The ledger, sorted for lookup.
    #[must_use]
    pub fn build(self) -> Ledger {
        // Sorted as (magnitude, index) pairs packed into one integer each: a non-negative
        // float's bits order as the float does, and sorting 16-byte integers moves far less
        // memory than sorting indices that look their keys up in the entries.
        let mut packed: Vec<u128> = self
            .entries
            .iter()
            .zip(0u32..)
            .map(|(e, i)| (u128::from(e.magnitude().abs().to_bits()) << 32) | u128::from(i))
            .collect();
        packed.sort_unstable();
        #[allow(clippy::cast_possible_truncation)]
        let order: Vec<u32> = packed.iter().map(|p| *p as u32).collect();
        #[allow(clippy::cast_possible_truncation)]
        let keys = packed
            .iter()
            .map(|p| f64::from_bits((p >> 32) as u64))
            .collect();
        Ledger {
            sources: self.sources,
            entries: self.entries,
            order,
            keys,
        }
    }
}

/// A conversation's figures, sorted by magnitude.
#[derive(Debug, Default)]
pub struct Ledger {
    sources: Vec<Source>,
    entries: Vec<Entry>,
    /// Entry indices by absolute magnitude.
    order: Vec<u32>,
    /// The absolute magnitudes, in `order`'s order: binary search reads these contiguously.
    keys: Vec<f64>,
}

impl Ledger {
    /// Every source.
    #[must_use]
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// Every entry, in the order they were added.
    #[must_use]
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry at `index`.
    #[must_use]
    pub fn entry(&self, index: u32) -> Option<&Entry> {
        self.entries.get(index as usize)
    }

    /// The source of an entry.
    #[must_use]
    pub fn source_of(&self, entry: &Entry) -> Option<&Source> {
        self.sources.get(entry.source as usize)
    }

    /// How many entries it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Indices of the entries whose absolute magnitude lies within `tolerance` of `magnitude`'s.
    #[must_use]
    pub fn near(&self, magnitude: f64, tolerance: f64) -> &[u32] {
        let target = magnitude.abs();
        let lo = self.keys.partition_point(|k| *k < target - tolerance);
        let hi = self.keys.partition_point(|k| *k <= target + tolerance);
        &self.order[lo..hi.max(lo)]
    }

    /// Entries of the same source on the same line as `index`: the figures of its table row.
    pub fn row_of(&self, index: u32) -> impl Iterator<Item = u32> + '_ {
        let i = index as usize;
        let (source, line) = self
            .entries
            .get(i)
            .map_or((u32::MAX, u32::MAX), |e| (e.source, e.line));
        let lo = i.saturating_sub(64);
        let hi = (i + 64).min(self.entries.len());
        (lo..hi)
            .filter(move |k| {
                *k != i && self.entries[*k].source == source && self.entries[*k].line == line
            })
            .filter_map(|k| u32::try_from(k).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> Source {
        Source {
            origin: Origin::Tool,
            message_seq: 1,
            tool_call_id: None,
            path: None,
        }
    }

    #[test]
    fn a_long_output_read_in_parts_gives_the_entries_one_pass_gives() {
        let mut text = String::from("region,revenue (USD),units,margin\n");
        let mut k = 0u32;
        while text.len() < PARALLEL_FROM * 2 {
            k += 1;
            text.push_str(&format!(
                "R{k} East,{},{},{}.{}%\n",
                k * 37,
                k % 977,
                k % 90,
                k % 7
            ));
            if k.is_multiple_of(5000) {
                text.push_str("\nTotal so far: 12,345 rows, $4.5M\n\nregion,revenue\n");
            }
        }
        let mut one = Vec::new();
        read_figures_with(&text, |l| one.push(Entry::new(0, l)));
        for parts in [2, 3, 4] {
            let mut entries = Vec::new();
            read_in_parts(&text, 0, parts, &mut entries);
            assert_eq!(entries, one, "{parts} parts");
        }
        let mut builder = LedgerBuilder::new();
        assert_eq!(builder.add_text(source(), &text), one.len());
        assert!(one.len() > 40_000, "{}", one.len());
    }
}
