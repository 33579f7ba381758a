//! `decima compress ID [--level L] [--strategy S] [--dry-run] [--json]` and
//! `decima compress undo COMPACTION_ID`.

use std::fmt::Write as _;
use std::path::Path;

use decima_core::context::compress::PlanInput;
use decima_core::context::{
    CompactionPlan, CompressionLevel, ContextReport, Layer, Strategy, compaction_range,
    pinned_units, plan, select,
};
use decima_store::Store;
use serde::Serialize;

use super::conversation_id;
use crate::args::{CompressArgs, CompressCommand, LevelArg, StrategyArg};
use crate::error::CliError;
use crate::{context_build, output, provider_config};

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
        let record = store.compactions().undo(&compaction_id).await?;
        eprintln!(
            "Undid compaction {} ({} level); its summaries are no longer used.",
            record.id, record.level
        );
        return Ok(());
    }
    let Some(id) = args.id.as_deref() else {
        return Err(CliError::Provider(
            "pass a conversation id, or `undo COMPACTION_ID`".into(),
        ));
    };
    let id = conversation_id(id)?;
    let (window, thresholds) =
        provider_config::context_window(store, data_dir, args.provider.as_deref()).await?;
    let conversation = store.conversations().get(id).await?;
    let preset = context_build::preset_of(store, &conversation).await?;
    let (budget, _) = context_build::history_budget(&preset, window);
    let messages = store.messages().all(id).await?;
    let pinned = pinned_units(&messages);
    let summaries = store.compactions().live_summaries(id).await?;
    let level = match args.level {
        Some(LevelArg::Standard) => CompressionLevel::Standard,
        Some(LevelArg::Deep) => CompressionLevel::Deep,
        Some(LevelArg::Phase) => CompressionLevel::Phase,
        Some(LevelArg::Checkpoint) => CompressionLevel::Checkpoint,
        None => {
            let selection = select(&messages, &pinned, &summaries, &budget)?;
            let report =
                ContextReport::from_selection(Vec::<Layer>::new(), &selection, window, &thresholds);
            match report.state.level() {
                Some(level) => level,
                None => {
                    eprintln!(
                        "Usage is {:.0}% of the {window}-token window, below the compression threshold; \
                         pass --level to compress anyway.",
                        report.usage * 100.0
                    );
                    return Ok(());
                }
            }
        }
    };
    let counter = decima_llm::tokens::store_counter();
    let mut input = PlanInput {
        messages: &messages,
        pinned: &pinned,
        summaries: &summaries,
        level,
        strategy: Strategy::Extract,
        budget,
        counter: counter.as_ref(),
        written: None,
    };
    let written = match args.strategy {
        StrategyArg::Extract => None,
        StrategyArg::Llm | StrategyArg::Structured => {
            let structured = matches!(args.strategy, StrategyArg::Structured);
            written_by_model(
                store,
                data_dir,
                args.provider.as_deref(),
                &input,
                structured,
            )
            .await?
        }
    };
    if let Some(text) = &written {
        input.strategy = match args.strategy {
            StrategyArg::Structured => Strategy::Structured,
            _ => Strategy::Llm,
        };
        input.written = Some(text);
    }
    let plan = plan(input)?;
    if plan.is_empty() {
        eprintln!(
            "Nothing to compress: every message is already summarised or must stay verbatim."
        );
        return print(&plan, None, args.dry_run, args.json);
    }
    let compaction_id = if args.dry_run {
        None
    } else {
        Some(store.compactions().apply(id, &plan, "manual").await?)
    };
    print(&plan, compaction_id, args.dry_run, args.json)
}

/// The summary a model writes for the range the next compaction covers. A structured summary
/// that does not validate falls back to extract (`None`), as the design asks; other failures end
/// the command.
async fn written_by_model(
    store: &Store,
    data_dir: &Path,
    provider: Option<&str>,
    input: &PlanInput<'_>,
    structured: bool,
) -> Result<Option<String>, CliError> {
    let Some(range) = compaction_range(input)? else {
        return Ok(None);
    };
    let config = provider_config::resolve(store, data_dir, provider).await?;
    let provider = decima_llm::HttpProvider::new(config)?;
    match decima_llm::summarize::write_summary(
        &provider,
        &input.messages[range],
        input.level,
        structured,
    )
    .await
    {
        Ok(text) => Ok(Some(text)),
        Err(e) if structured && e.class() == decima_core::FailureClass::Logic => {
            eprintln!("warning: {e}; falling back to the extract strategy");
            Ok(None)
        }
        Err(e) => Err(e.into()),
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
