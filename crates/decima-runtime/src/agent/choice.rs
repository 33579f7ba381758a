//! The analyst's answer to a failure: one of the choices it offers, and what they want the
//! agent to know while it goes on ("Replan, and use ledger_q3.csv"). Text typed while a run
//! waits is never dropped: it goes with the choice, into the conversation, where the model
//! reads it and the analyst sees it.

use decima_core::CoreError;
use decima_store::Resolution;

use crate::error::{Result, RuntimeError};

/// The longest guidance taken with a choice, in characters: longer material belongs in a file
/// of the workspace, which the guidance can name.
pub const MAX_GUIDANCE_CHARS: usize = 8_000;

/// A choice and the analyst's guidance with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// What to do.
    pub resolution: Resolution,
    /// What the analyst adds, trimmed; never empty.
    pub guidance: Option<String>,
    /// For a failure that lists figures: which of them (1-based) the choice is for; empty for
    /// all of them.
    pub figures: Vec<usize>,
    /// For a correction: the right value, as the answer should say it.
    pub value: Option<String>,
}

impl Choice {
    /// A choice with guidance. Blank guidance is none; guidance longer than
    /// [`MAX_GUIDANCE_CHARS`] is refused with an error that says what to do instead.
    pub fn new(resolution: Resolution, guidance: Option<&str>) -> Result<Self> {
        let guidance = guidance.map(str::trim).filter(|g| !g.is_empty());
        if let Some(text) = guidance {
            let chars = text.chars().count();
            if chars > MAX_GUIDANCE_CHARS {
                let thousands = |n: usize| {
                    crate::served_window::thousands(u32::try_from(n).unwrap_or(u32::MAX))
                };
                return Err(RuntimeError::Core(CoreError::InvalidMessage(format!(
                    "the guidance is {} characters; at most {} go with a choice: put longer \
                     material in a file of the workspace and name it",
                    thousands(chars),
                    thousands(MAX_GUIDANCE_CHARS)
                ))));
            }
        }
        Ok(Self {
            resolution,
            guidance: guidance.map(str::to_owned),
            figures: Vec::new(),
            value: None,
        })
    }

    /// The same choice for some of a failure's figures only (1-based, as listed).
    #[must_use]
    pub fn for_figures(mut self, figures: Vec<usize>) -> Self {
        self.figures = figures;
        self
    }

    /// The same choice with the analyst's corrected value.
    #[must_use]
    pub fn with_value(mut self, value: Option<String>) -> Self {
        self.value = value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        self
    }
}

impl From<Resolution> for Choice {
    fn from(resolution: Resolution) -> Self {
        Self {
            resolution,
            guidance: None,
            figures: Vec::new(),
            value: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_guidance_is_none_and_too_long_is_refused_with_what_to_do() {
        let blank = Choice::new(Resolution::Replan, Some("  \n ")).unwrap();
        assert_eq!(blank.guidance, None);
        let kept = Choice::new(Resolution::Replan, Some(" use ledger_q3.csv \n")).unwrap();
        assert_eq!(kept.guidance.as_deref(), Some("use ledger_q3.csv"));
        let long = "é".repeat(MAX_GUIDANCE_CHARS + 1);
        let refused = Choice::new(Resolution::Retry, Some(&long)).unwrap_err();
        assert!(
            refused.to_string().contains("file of the workspace"),
            "{refused}"
        );
        assert!(Choice::new(Resolution::Retry, Some(&long[..MAX_GUIDANCE_CHARS * 2])).is_ok());
    }
}
