//! Search commands: full-text search across conversations (the sidebar) and find in one
//! conversation (the conversation's find bar), both through the store's index.

use decima_store::{SearchQuery, Snippet};
use tauri::State;

use crate::dto::{FindView, SearchHitView, SearchPageView, SnippetView};
use crate::{AppError, AppState};

/// The most matches find in a conversation steps through; beyond it the bar says "1,000+".
const MAX_FIND: u32 = 1_000;

/// A page of messages holding every word of `text`, newest first, across every live
/// conversation or within one. `after` is the previous page's `next`.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "search_messages"))]
pub async fn search_messages(
    state: State<'_, AppState>,
    text: String,
    conversation_id: Option<String>,
    after: Option<String>,
    limit: u32,
) -> Result<SearchPageView, AppError> {
    let conversation = conversation_id
        .as_deref()
        .map(super::conversation_id)
        .transpose()?;
    let before = after
        .as_deref()
        .map(|cursor| {
            cursor
                .parse::<i64>()
                .map_err(|_| AppError::invalid("That page of results is no longer valid."))
        })
        .transpose()?;
    let page = state
        .store
        .search()
        .messages(&SearchQuery {
            text: &text,
            conversation,
            before,
            limit,
        })
        .await?;
    Ok(SearchPageView {
        hits: page
            .hits
            .into_iter()
            .map(|hit| SearchHitView {
                conversation_id: hit.conversation_id.to_string(),
                conversation_title: hit.conversation_title,
                seq: u32::try_from(hit.seq).unwrap_or(u32::MAX),
                role: hit.role,
                created_at: hit.created_at.to_rfc3339(),
                snippet: snippet_view(hit.snippet),
            })
            .collect(),
        next: page.next.map(|cursor| cursor.to_string()),
    })
}

/// The seqs of one conversation's messages that hold every word of `text`, oldest first.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "find_in_conversation"))]
pub async fn find_in_conversation(
    state: State<'_, AppState>,
    conversation_id: String,
    text: String,
) -> Result<FindView, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let found = state.store.search().seqs_in(id, &text, MAX_FIND).await?;
    Ok(FindView {
        seqs: found
            .seqs
            .into_iter()
            .map(|seq| u32::try_from(seq).unwrap_or(u32::MAX))
            .collect(),
        truncated: found.truncated,
    })
}

fn snippet_view(snippet: Snippet) -> SnippetView {
    SnippetView {
        before: snippet.before,
        matched: snippet.matched,
        after: snippet.after,
    }
}
