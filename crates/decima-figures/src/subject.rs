//! What a figure is about, in two parts: what it measures (a column's header, the words before
//! it) and which row or item (a row's label, a line's label). A table's header is shared by
//! every figure under it and a row's label by every figure of the row, so both are kept once and
//! each figure holds them by reference: a megabyte of CSV reads without a string per figure.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::sentences::words;

/// How the two parts are joined where they are shown, and split where they are read back.
const JOIN: &str = " · ";

/// A figure's subject: "revenue · North" is `about` "revenue", `row` "North".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subject {
    /// What it measures: a column's header, or the words before it in prose.
    pub about: Option<Arc<str>>,
    /// Which row or item: a table row's label, or the label its line opens with.
    pub row: Option<Arc<str>>,
}

impl Subject {
    /// A subject of one part, shown as written.
    #[must_use]
    pub fn about(text: &str) -> Self {
        Self {
            about: (!text.is_empty()).then(|| Arc::from(text)),
            row: None,
        }
    }

    /// Whether the text said nothing about the figure.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.about.as_deref().is_none_or(str::is_empty)
            && self.row.as_deref().is_none_or(str::is_empty)
    }

    /// Its words: those of its row, which a sentence must name in full to be about it, and those
    /// of what it measures, which a sentence may leave implied ("North brought in 1.2 million" is
    /// about "revenue · North").
    #[must_use]
    pub fn word_parts(&self) -> (Vec<String>, Vec<String>) {
        let about = self.about.as_deref().unwrap_or("");
        match self.row.as_deref() {
            Some(row) => (words(row), words(about)),
            None => match about.split_once(": ") {
                Some((row, about)) => (words(row), words(about)),
                None => (Vec::new(), words(about)),
            },
        }
    }

    /// Reads a subject as [`fmt::Display`] wrote it.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        match text.split_once(JOIN) {
            Some((about, row)) => Self {
                about: Some(Arc::from(about)),
                row: Some(Arc::from(row)),
            },
            None => Self::about(text),
        }
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.about.as_deref(), self.row.as_deref()) {
            (Some(about), Some(row)) => write!(f, "{about}{JOIN}{row}"),
            (Some(one), None) | (None, Some(one)) => f.write_str(one),
            (None, None) => Ok(()),
        }
    }
}

impl Serialize for Subject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Subject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(Self::parse(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subject_reads_back_as_it_was_shown() {
        let s = Subject {
            about: Some(Arc::from("revenue")),
            row: Some(Arc::from("North")),
        };
        assert_eq!(s.to_string(), "revenue · North");
        assert_eq!(Subject::parse(&s.to_string()), s);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, "\"revenue · North\"");
        assert_eq!(serde_json::from_str::<Subject>(&json).unwrap(), s);
        assert!(Subject::default().is_empty());
        assert_eq!(Subject::about("").to_string(), "");
    }

    #[test]
    fn its_row_must_be_named_and_its_measure_may_be_implied() {
        let s = Subject::parse("revenue · Jan2019 East");
        assert_eq!(s.word_parts().0, vec!["jan2019", "east"]);
        assert_eq!(s.word_parts().1, vec!["revenue"]);
        assert_eq!(Subject::about("East: margin").word_parts().0, vec!["east"]);
        assert!(Subject::about("total cost").word_parts().0.is_empty());
    }
}
