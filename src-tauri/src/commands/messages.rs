//! Message commands: reading a conversation a page at a time, from its end, from its start or
//! around one message.

use decima_core::{ConversationId, Message};
use tauri::State;

use crate::dto::{MessagePage, PageAt, ToolImageView};
use crate::{AppError, AppState, MessageView};

/// The most a page may hold: a screenful many times over, and still a small IPC message.
const MAX_PAGE: u32 = 1_000;

/// A page of the conversation's live messages at `at`. The view opens at the end and reads up
/// and down from what it shows, so a conversation of 100k messages opens as fast as one of a
/// hundred, and a jump to its first message reads one page, not every page above the end.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "message_page"))]
pub async fn message_page(
    state: State<'_, AppState>,
    conversation_id: String,
    at: PageAt,
    limit: u32,
) -> Result<MessagePage, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let conversation = state.store.conversations().get(id).await?;
    let limit = limit.clamp(1, MAX_PAGE);
    let messages = read_page(&state, id, at, limit).await?;
    let (has_earlier, has_later) = match (messages.first(), messages.last()) {
        (Some(first), Some(last)) => {
            let store = state.store.messages();
            (
                store.any_live_beyond(id, first.seq, true).await?,
                store.any_live_beyond(id, last.seq, false).await?,
            )
        }
        _ => (false, false),
    };
    let mut answers = match (messages.first(), messages.last()) {
        (Some(first), Some(last)) => state
            .store
            .answers()
            .within(id, first.seq, last.seq)
            .await?
            .into_iter()
            .map(|a| (a.seq, a.record))
            .collect(),
        _ => std::collections::HashMap::new(),
    };
    Ok(MessagePage {
        messages: messages
            .into_iter()
            .map(|m| {
                let answer = answers.remove(&m.seq).map(crate::dto::AnswerView::from);
                MessageView {
                    answer,
                    ..MessageView::from(m)
                }
            })
            .collect(),
        has_earlier,
        has_later,
        total: u32::try_from(conversation.message_count).unwrap_or(u32::MAX),
    })
}

/// The images a tool call's result carries (an MCP server's chart), for its card in the run
/// view and in the history. A call with none, or not in this conversation, has none.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "tool_result_images"))]
pub async fn tool_result_images(
    state: State<'_, AppState>,
    conversation_id: String,
    call_id: String,
) -> Result<Vec<ToolImageView>, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    if call_id.is_empty() || call_id.len() > 256 {
        return Err(AppError::invalid(
            "a tool call id is between 1 and 256 characters",
        ));
    }
    let images = state.store.messages().result_images(id, &call_id).await?;
    Ok(images
        .into_iter()
        .map(|image| ToolImageView {
            media_type: image.media_type,
            data: image.data.to_string(),
        })
        .collect())
}

/// Pins or unpins a message from the window: a pinned message is never compressed away, and
/// every request carries it.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "message_set_pinned"))]
pub async fn message_set_pinned(
    state: State<'_, AppState>,
    conversation_id: String,
    seq: u32,
    pinned: bool,
) -> Result<(), AppError> {
    let id = super::conversation_id(&conversation_id)?;
    state
        .store
        .messages()
        .set_pinned(id, i64::from(seq), pinned)
        .await?;
    Ok(())
}

/// Where the result of a tool call is in the conversation (its seq), for the window to bring
/// it into view; `None` when it is not stored (any more).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "tool_result_seq"))]
pub async fn tool_result_seq(
    state: State<'_, AppState>,
    conversation_id: String,
    call_id: String,
    after_seq: Option<u32>,
) -> Result<Option<u32>, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    if call_id.is_empty() || call_id.len() > 256 {
        return Err(AppError::invalid(
            "a tool call id is between 1 and 256 characters",
        ));
    }
    let seq = state
        .store
        .messages()
        .seq_of_result(id, &call_id, after_seq.map(i64::from))
        .await?;
    Ok(seq.and_then(|s| u32::try_from(s).ok()))
}

/// The messages of one page, in seq order.
async fn read_page(
    state: &AppState,
    id: ConversationId,
    at: PageAt,
    limit: u32,
) -> Result<Vec<Message>, AppError> {
    let store = state.store.messages();
    Ok(match at {
        PageAt::End => store.page_before(id, 0, i64::MAX, limit).await?,
        PageAt::Before { seq } => store.page_before(id, 0, i64::from(seq), limit).await?,
        PageAt::After { seq } => store.page_after(id, i64::from(seq), limit).await?,
        PageAt::Around { seq } => {
            // The target and the half page above it, then what follows; near either end of
            // the conversation the other side fills the page.
            let above = limit.div_ceil(2);
            let mut page = store.page_before(id, 0, i64::from(seq) + 1, above).await?;
            let below = limit - u32::try_from(page.len()).unwrap_or(above);
            let after = page.last().map_or(i64::from(seq), |m| m.seq);
            page.extend(store.page_after(id, after, below).await?);
            let short = limit as usize - page.len();
            if short > 0
                && let Some(first) = page.first().map(|m| m.seq)
            {
                let mut earlier = store
                    .page_before(id, 0, first, u32::try_from(short).unwrap_or(0))
                    .await?;
                earlier.append(&mut page);
                page = earlier;
            }
            page
        }
    })
}

/// The figures of an assistant's answer, each with the output that holds it, its derivation,
/// or nothing (unlinked), and the analyst's and the tenth man's word on it: what makes a figure
/// in the window a link to its source.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "message_figures"))]
pub async fn message_figures(
    state: State<'_, AppState>,
    conversation_id: String,
    seq: u32,
) -> Result<crate::dto::FiguresView, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let report =
        decima_runtime::figures::check_message(&state.store, &state.data_dir, id, i64::from(seq))
            .await?;
    Ok(crate::dto::FiguresView::from(&report))
}
