//! Measure: the one context report that both the UI meter and the compression policy read.

use serde::{Deserialize, Serialize};

use crate::context::summary::{ThresholdState, Thresholds};
use crate::context::window::Selection;

/// Tokens of one named layer of the request (e.g. `system`, `global_summary`, `recent`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layer {
    /// The layer's name, stable for the UI and the CLI's JSON.
    pub name: String,
    /// Its tokens.
    pub tokens: u32,
}

impl Layer {
    /// A layer with a name and a token count.
    pub fn new(name: impl Into<String>, tokens: u32) -> Self {
        Self {
            name: name.into(),
            tokens,
        }
    }
}

/// Tokens per layer, the total, the window, the usage fraction and the threshold state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextReport {
    /// Every layer, fixed layers first.
    pub layers: Vec<Layer>,
    /// Sum of the layers: what must be sent.
    pub total: u32,
    /// The model's context window.
    pub window: u32,
    /// `total / window`; above 1.0 when the history has outgrown the window.
    pub usage: f64,
    /// What the compression policy should do.
    pub state: ThresholdState,
}

impl ContextReport {
    /// A report from any list of layers.
    pub fn new(layers: Vec<Layer>, window: u32, thresholds: &Thresholds) -> Self {
        let total = layers
            .iter()
            .fold(0u32, |acc, l| acc.saturating_add(l.tokens));
        let usage = if window == 0 {
            if total == 0 { 0.0 } else { f64::INFINITY }
        } else {
            f64::from(total) / f64::from(window)
        };
        Self {
            layers,
            total,
            window,
            usage,
            state: thresholds.state(usage),
        }
    }

    /// A report for a selection: the fixed layers (system constants, session context, instant
    /// context, output reserve if the caller counts it), then `global_summary`,
    /// `segment_summaries`, `pinned` and `recent`. `recent` counts every uncovered message,
    /// including those pending compression, so usage is what must be sent.
    pub fn from_selection(
        fixed: Vec<Layer>,
        selection: &Selection<'_>,
        window: u32,
        thresholds: &Thresholds,
    ) -> Self {
        let mut layers = fixed;
        layers.push(Layer::new("global_summary", selection.global_tokens));
        layers.push(Layer::new("segment_summaries", selection.segment_tokens));
        layers.push(Layer::new("pinned", selection.pinned_tokens));
        layers.push(Layer::new(
            "recent",
            selection
                .recent_tokens
                .saturating_add(selection.pending_tokens),
        ));
        Self::new(layers, window, thresholds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Role;
    use crate::context::summary::HistoryBudget;
    use crate::context::window::{select, tests::msg};

    #[test]
    fn usage_counts_what_must_be_sent_and_can_exceed_one() {
        let msgs: Vec<_> = (1..=10).map(|s| msg(s, Role::User, 100)).collect();
        let sel = select(&msgs, &[], &[], &HistoryBudget::new(500)).unwrap();
        let report = ContextReport::from_selection(
            vec![Layer::new("system", 200)],
            &sel,
            1000,
            &Thresholds::default(),
        );
        assert_eq!(report.total, 1200);
        assert!((report.usage - 1.2).abs() < 1e-9);
        assert_eq!(report.state, ThresholdState::Deep);
        assert_eq!(report.layers.len(), 5);
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["state"], "deep");
    }
}
