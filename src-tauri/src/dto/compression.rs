//! The compression dialog's preview and the markers of compactions in force.

use decima_core::context::{CompactionPlan, CompressionLevel, Strategy, SummaryLevel};
use decima_store::CompactionTrigger;
use serde::Serialize;
use specta::Type;

/// A summary a compression writes.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SummaryPreview {
    /// A segment's summary or the global one.
    pub level: SummaryLevel,
    /// The first seq it covers.
    pub start_seq: u32,
    /// The last.
    pub end_seq: u32,
    /// Its tokens.
    pub tokens: u32,
    /// Its text, as the model will read it.
    pub text: String,
}

/// What a compression will do (the preview) or did (after confirm).
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CompressionPreview {
    /// The stored compaction, after confirm; `None` for a preview.
    pub compaction_id: Option<String>,
    /// What the compression keeps.
    pub level: CompressionLevel,
    /// How its summaries are written.
    pub strategy: Strategy,
    /// Tokens of the whole request before, as the context meter counts them.
    pub tokens_before: u32,
    /// And after: what the meter reads once the compression is applied.
    pub tokens_after: u32,
    /// The new summaries.
    pub summaries: Vec<SummaryPreview>,
    /// Seqs that stay verbatim (pinned or recent).
    pub kept_verbatim: Vec<u32>,
    /// Nothing to compress: everything is summarised already or must stay verbatim.
    pub empty: bool,
}

fn seq(n: i64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl CompressionPreview {
    /// The plan in the dialog's terms.
    pub fn new(plan: &CompactionPlan, compaction_id: Option<String>) -> Self {
        Self {
            compaction_id,
            level: plan.level,
            strategy: plan.strategy,
            tokens_before: plan.tokens_before,
            tokens_after: plan.tokens_after,
            summaries: plan
                .new_summaries
                .iter()
                .map(|s| SummaryPreview {
                    level: s.level,
                    start_seq: seq(s.start_seq),
                    end_seq: seq(s.end_seq),
                    tokens: s.tokens,
                    text: s.text.clone(),
                })
                .collect(),
            kept_verbatim: plan.kept_verbatim.iter().map(|s| seq(*s)).collect(),
            empty: plan.is_empty(),
        }
    }
}

/// A compaction in force: a marker in the conversation, where its summaries stand, with undo.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CompactionMarker {
    /// Its id, for undo.
    pub id: String,
    /// How far it compressed.
    pub level: CompressionLevel,
    /// What set it off.
    pub trigger: CompactionTrigger,
    /// extract, llm or structured.
    pub strategy: String,
    /// Tokens before.
    pub tokens_before: u32,
    /// Tokens after.
    pub tokens_after: u32,
    /// The first seq its summaries cover.
    pub start_seq: Option<u32>,
    /// The last.
    pub end_seq: Option<u32>,
    /// Only the newest compaction in force can be undone.
    pub undoable: bool,
    /// RFC 3339, UTC.
    pub created_at: String,
}
