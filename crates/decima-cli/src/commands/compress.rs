//! `decima compress ID [--level L] [--strategy S] [--dry-run] [--json]` and
//! `decima compress undo COMPACTION_ID`.

use std::fmt::Write as _;
use std::path::Path;

use decima_core::context::{CompactionPlan, CompressionLevel, Strategy};
use decima_runtime::compression::{self, CompressContext, CompressOutcome, CompressRequest};
use decima_runtime::context::preset_of;
use decima_runtime::settings;
use decima_runtime::{Event, EventSink};
use decima_store::Store;
use serde::Serialize;

use super::conversation_id;
use crate::args::{CompressArgs, CompressCommand, LevelArg, StrategyArg};
use crate::error::CliError;
use crate::output;

#[derive(Serialize)]
struct SummaryJson<'a> {
    id: &'a str,
    level: &'static str,
    start_seq: i64,
    end_seq: i64,
    tokens: u32,
    text: &'a str,
}

#[derive(Serialize)]
struct CompressJson<'a> {
    compaction_id: Option<String>,
    dry_run: bool,
    level: &'static str,
    strategy: &'static str,
    tokens_before: u32,
    tokens_after: u32,
    summaries: Vec<SummaryJson<'a>>,
    superseded: &'a [String],
    kept_verbatim: &'a [i64],
}

pub async fn run(store: &Store, data_dir: &Path, args: CompressArgs) -> Result<(), CliError> {
    if let Some(CompressCommand::Undo { compaction_id }) = args.undo {
        let record = compression::undo(store, data_dir, &compaction_id).await?;
        eprintln!(
            "Undid compaction {} ({} level); its summaries are no longer used.",
            record.id,
            record.level.as_str()
        );
        return Ok(());
    }
    let Some(id) = args.id.as_deref() else {
        return Err(CliError::Provider(
            "pass a conversation id, or `undo COMPACTION_ID`".into(),
        ));
    };
    let id = conversation_id(id)?;
    let window = settings::window_settings(store, args.provider.as_deref()).await?;
    let conversation = store.conversations().get(id).await?;
    let preset = preset_of(store, &conversation).await?;
    let level = args.level.map(|level| match level {
        LevelArg::Standard => CompressionLevel::Standard,
        LevelArg::Deep => CompressionLevel::Deep,
        LevelArg::Phase => CompressionLevel::Phase,
        LevelArg::Checkpoint => CompressionLevel::Checkpoint,
    });
    let strategy = match args.strategy {
        StrategyArg::Extract => Strategy::Extract,
        StrategyArg::Llm => Strategy::Llm,
        StrategyArg::Structured => Strategy::Structured,
    };
    let notices = Notices;
    let ctx = CompressContext {
        store,
        data_dir,
        conversation: &conversation,
        preset: &preset,
        window: &window,
        scale: settings::calibration_scale(store, args.provider.as_deref()).await?,
        provider: args.provider.as_deref(),
        events: &notices,
    };
    let request = CompressRequest {
        level,
        strategy,
        dry_run: args.dry_run,
        written: None,
    };
    match compression::compress(&ctx, request).await? {
        CompressOutcome::BelowThreshold { usage, window } => {
            eprintln!(
                "Usage is {:.0}% of the room the {window}-token window leaves for the prompt, below the \
                 compression threshold; pass --level to compress anyway.",
                usage * 100.0
            );
            Ok(())
        }
        CompressOutcome::Planned {
            plan,
            compaction_id,
            ..
        } => {
            if plan.is_empty() {
                eprintln!(
                    "Nothing to compress: every message is already summarised or must stay verbatim."
                );
            }
            print(&plan, compaction_id, args.dry_run, args.json)
        }
    }
}

/// Prints the runtime's warnings (a structured summary that fell back to extract).
struct Notices;

impl EventSink for Notices {
    fn emit(&self, event: Event) {
        if let Event::Warning { message } = event {
            eprintln!("warning: {message}");
        }
    }
}

fn print(
    plan: &CompactionPlan,
    compaction_id: Option<String>,
    dry_run: bool,
    json: bool,
) -> Result<(), CliError> {
    if json {
        return output::print_json(&CompressJson {
            compaction_id,
            dry_run,
            level: plan.level.as_str(),
            strategy: plan.strategy.as_str(),
            tokens_before: plan.tokens_before,
            tokens_after: plan.tokens_after,
            summaries: plan
                .new_summaries
                .iter()
                .map(|s| SummaryJson {
                    id: &s.id,
                    level: s.level.as_str(),
                    start_seq: s.start_seq,
                    end_seq: s.end_seq,
                    tokens: s.tokens,
                    text: &s.text,
                })
                .collect(),
            superseded: &plan.superseded,
            kept_verbatim: &plan.kept_verbatim,
        });
    }
    let mut text = match &compaction_id {
        Some(id) => format!("{id}\n"),
        None => "preview (nothing stored)\n".to_string(),
    };
    let _ = writeln!(
        text,
        "{} {}: {} → {} tokens",
        plan.level.as_str(),
        plan.strategy.as_str(),
        plan.tokens_before,
        plan.tokens_after
    );
    for s in &plan.new_summaries {
        let _ = writeln!(
            text,
            "{} summary of seq {}–{} ({} tokens)",
            s.level.as_str(),
            s.start_seq,
            s.end_seq,
            s.tokens
        );
        if dry_run {
            text.push_str(&s.text);
            if !s.text.ends_with('\n') {
                text.push('\n');
            }
        }
    }
    if dry_run {
        let _ = writeln!(text, "kept verbatim: {} messages", plan.kept_verbatim.len());
    }
    output::print(&text)
}
