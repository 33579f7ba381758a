//! The tenth-man button: an adversarial review of the open conversation's whole history.

use decima_runtime::review::{
    self, ReviewContext, ReviewMode, ReviewRequest, ReviewTrigger, ReviewType,
};
use tauri::State;

use crate::dto::ReviewView;
use crate::{AppError, AppState};

/// Reviews the conversation's history against its current conclusion. `review_type` is quick,
/// full (the default) or recompute; `focus` narrows what the reviewer looks at; `figures` are
/// the newest answer's figures (numbered from 1) the analyst marked for a recompute.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "review_run"))]
pub async fn review_run(
    state: State<'_, AppState>,
    conversation_id: String,
    review_type: Option<String>,
    focus: Option<String>,
    figures: Option<Vec<u32>>,
) -> Result<ReviewView, AppError> {
    let conversation = super::conversation_id(&conversation_id)?;
    let review_type = match review_type.as_deref() {
        None | Some("") => ReviewType::Full,
        Some(text) => ReviewType::parse(text)?,
    };
    let focus = focus.map(|f| f.trim().to_owned()).filter(|f| !f.is_empty());
    let store = &state.store;
    let chosen = decima_runtime::preferences::load(store).await?;
    let agent_provider = chosen.provider_in_force(store).await?;
    let reviewer = chosen.reviewer_in_force(store).await?;
    let earlier = store.reviews().open_findings(conversation, None).await?;
    let outcome = review::review(
        &ReviewContext {
            store,
            data_dir: &state.data_dir,
            events: &decima_runtime::NoEvents,
            agent_provider: agent_provider.as_deref(),
        },
        ReviewRequest {
            conversation,
            execution: None,
            mode: ReviewMode::FullHistory,
            review_type,
            focus: focus.clone(),
            trigger: ReviewTrigger::User,
            reviewer,
            final_review: false,
            // A recompute review also works out the figures the analyst marked: numbers in the
            // newest run's answer, as the window lists them.
            figures: figures.unwrap_or_default(),
        },
    )
    .await?;
    Ok(ReviewView::of(&outcome.review, &earlier, outcome.cached))
}

/// The newest review of the conversation (asked for in the window, by the agent, or a run's
/// final review), so the review panel opens on it without asking the model again; with
/// `execution_id`, the newest review of that run (a row of the run history). `None` when there
/// is none.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "review_latest"))]
pub async fn review_latest(
    state: State<'_, AppState>,
    conversation_id: String,
    execution_id: Option<String>,
) -> Result<Option<ReviewView>, AppError> {
    let conversation = super::conversation_id(&conversation_id)?;
    let of_run = execution_id
        .as_deref()
        .map(super::execution_id)
        .transpose()?;
    let store = &state.store;
    // A run's own review (its row in the run history), else the conversation's newest.
    let Some(latest) = store
        .reviews()
        .list(conversation)
        .await?
        .into_iter()
        .rev()
        .find(|r| of_run.is_none() || r.execution_id == of_run)
    else {
        return Ok(None);
    };
    let earlier = store.reviews().open_findings(conversation, None).await?;
    Ok(Some(ReviewView::of(&latest, &earlier, false)))
}
