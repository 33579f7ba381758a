//! The context pipeline's pure stages: Select (the sliding window), Measure (the context report),
//! and Compress (extract summaries, folding, compaction planning), plus the step history.
//!
//! Nothing here does I/O. The store persists [`Summary`] rows (table `summaries`) and applies or
//! reverts a [`CompactionPlan`] (table `compactions`); the runtime decides when to call
//! [`plan`] by reading the one [`ContextReport`].

pub mod compress;
pub mod extract;
pub mod fold;
pub mod measure;
pub mod steps;
pub mod summary;
pub mod window;

pub use compress::{CompactionPlan, choose_range, compaction_range, plan, with_missing_literals};
pub use extract::{Detail, Digest, Source, Statement, StatementKind, extract_messages};
pub use fold::{fold_summaries, render_within};
pub use measure::{ContextReport, Layer};
pub use steps::{ExecutionHistoryManager, StepKind, StepRecord, describe_call};
pub use summary::{
    CompressionLevel, HistoryBudget, Shares, Strategy, Summary, SummaryLevel, ThresholdState,
    Thresholds,
};
pub use window::{Selection, pinned_units, select, units_from_end};
