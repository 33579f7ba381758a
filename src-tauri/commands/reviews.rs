//! The tenth-man button: an adversarial review of the open conversation's whole history.

use decima_runtime::review::{
    self, ReviewContext, ReviewMode, ReviewRequest, ReviewTrigger, ReviewType,
};
use tauri::State;

use crate::dto::{FindingView, ReviewView};
use crate::{AppError, AppState};

/// Reviews the conversation's history against its current conclusion. `review_type` is quick
/// or full (the default); `focus` narrows what the reviewer looks at.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "review_run"))]
pub async fn review_run(
    state: State<'_, AppState>,
    conversation_id: String,
    review_type: Option<String>,
    focus: Option<String>,
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
        },
    )
    .await?;
    let reviewed = &outcome.review;
    Ok(ReviewView {
        id: reviewed.id.clone(),
        risk_level: reviewed.risk_level.clone(),
        summary: reviewed.summary.clone(),
        review_type: reviewed.review_type.clone(),
        focus,
        findings: reviewed.findings.iter().map(FindingView::from).collect(),
        open_questions: reviewed.open_questions.clone(),
        earlier_open_findings: earlier
            .iter()
            .filter(|f| f.review_id != reviewed.id)
            .map(FindingView::from)
            .collect(),
        cached: outcome.cached,
    })
}
