//! The compression dialog: preview what a level and strategy would keep, confirm, undo; and
//! the compactions in force, shown as markers in the conversation.

use decima_core::context::{CompressionLevel, Strategy};
use decima_runtime::compression::{self, CompressContext, CompressOutcome, CompressRequest};
use decima_runtime::{context, settings};
use tauri::State;

use crate::dto::{CompactionMarker, CompressionPreview};
use crate::{AppError, AppState};

/// What compressing at `level` with `strategy` would do; nothing is stored.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "compression_preview"))]
pub async fn compression_preview(
    state: State<'_, AppState>,
    conversation_id: String,
    level: CompressionLevel,
    strategy: Strategy,
) -> Result<CompressionPreview, AppError> {
    run(&state, &conversation_id, level, strategy, true).await
}

/// Compresses at `level` with `strategy` and stores the compaction. A model-written summary is
/// the one the preview showed, unless the conversation changed since; then the model writes
/// it again.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "compression_apply"))]
pub async fn compression_apply(
    state: State<'_, AppState>,
    conversation_id: String,
    level: CompressionLevel,
    strategy: Strategy,
) -> Result<CompressionPreview, AppError> {
    run(&state, &conversation_id, level, strategy, false).await
}

/// Undoes a compaction: its summaries stop being in force and what they replaced is back.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "compression_undo"))]
pub async fn compression_undo(
    state: State<'_, AppState>,
    compaction_id: String,
) -> Result<(), AppError> {
    decima_runtime::compression::undo(&state.store, &state.data_dir, &compaction_id).await?;
    Ok(())
}

/// The conversation's compactions in force, oldest first.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "compaction_list"))]
pub async fn compaction_list(
    state: State<'_, AppState>,
    conversation_id: String,
) -> Result<Vec<CompactionMarker>, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    state.store.conversations().get(id).await?;
    let records = state.store.compactions().in_force(id).await?;
    let newest = records.last().map(|(r, _)| r.id.clone());
    let seq = |n: i64| u32::try_from(n).unwrap_or(u32::MAX);
    Ok(records
        .into_iter()
        .map(|(r, range)| CompactionMarker {
            undoable: Some(&r.id) == newest.as_ref(),
            start_seq: range.map(|(s, _)| seq(s)),
            end_seq: range.map(|(_, e)| seq(e)),
            id: r.id,
            level: r.level,
            trigger: r.trigger,
            strategy: r.strategy,
            tokens_before: r.tokens_before,
            tokens_after: r.tokens_after,
            created_at: r.created_at.to_rfc3339(),
        })
        .collect())
}

async fn run(
    state: &AppState,
    conversation_id: &str,
    level: CompressionLevel,
    strategy: Strategy,
    dry_run: bool,
) -> Result<CompressionPreview, AppError> {
    let id = super::conversation_id(conversation_id)?;
    let store = &state.store;
    let conversation = store.conversations().get(id).await?;
    let preset = context::preset_of(store, &conversation).await?;
    let provider = super::settings::provider_in_force(state, id).await?;
    let window = settings::window_settings(store, provider.as_deref()).await?;
    let ctx = CompressContext {
        store,
        data_dir: &state.data_dir,
        conversation: &conversation,
        preset: &preset,
        window: &window,
        scale: settings::calibration_scale(store, provider.as_deref()).await?,
        provider: provider.as_deref(),
        events: &decima_runtime::NoEvents,
    };
    // Confirming uses the preview's model-written summary; the runtime checks it still covers
    // the same messages at the same level and strategy, and asks the model again if not.
    // The meter's figure now: the dialog says the whole request before and after, as the meter
    // will read it, not the history's share alone.
    let request_now = context::build(store, &conversation, &preset, &window, ctx.scale)
        .await?
        .report
        .total;
    let written = if dry_run {
        None
    } else {
        previews(state).remove(&id)
    };
    let outcome = compression::compress(
        &ctx,
        CompressRequest {
            level: Some(level),
            strategy,
            dry_run,
            written,
        },
    )
    .await?;
    match outcome {
        CompressOutcome::Planned {
            plan,
            compaction_id,
            written,
        } => {
            if dry_run && let Some(summary) = written {
                previews(state).insert(id, summary);
            }
            let mut preview = CompressionPreview::new(&plan, compaction_id);
            preview.tokens_before = request_now;
            preview.tokens_after = compression::request_after(request_now, &plan, ctx.scale);
            Ok(preview)
        }
        // Only without a level; the dialog always gives one.
        CompressOutcome::BelowThreshold { .. } => Err(AppError::invalid(
            "the context is below the compression threshold",
        )),
    }
}

/// The previews' summaries. A poisoned lock only means another command panicked while holding
/// it; the map is still a valid cache.
fn previews(
    state: &AppState,
) -> std::sync::MutexGuard<
    '_,
    std::collections::HashMap<decima_core::ConversationId, compression::WrittenSummary>,
> {
    state
        .previews
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
