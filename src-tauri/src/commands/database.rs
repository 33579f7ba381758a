//! Which store this desktop opens, in Settings: this computer's file, or a team's shared
//! PostgreSQL database (its URL typed, its password kept in the secret store, never shown
//! again). `DECIMA_DATABASE_URL` in the app's environment wins, and the window says so. A
//! change takes effect at the next start: the open store serves every view and run of this
//! window, and swapping it under them would mix two histories.
//!
//! On a shared store the window also follows what others write: `store_changes_watch` hands
//! the page the store's change feed (PostgreSQL's notifications), and the page reads again
//! what a change names.

use std::sync::atomic::Ordering;

use decima_runtime::database::{self, Source};
use decima_store::Change;
use tauri::State;
use tauri::ipc::Channel;

use crate::dto::{DatabaseView, StoreChange};
use crate::{AppError, AppState};

/// What Settings shows of the database.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "database_get"))]
pub async fn database_get(state: State<'_, AppState>) -> Result<DatabaseView, AppError> {
    view(&state).await
}

/// Checks and saves a shared database (`url`, and `password` unless it is empty or the URL
/// holds one). Nothing is saved when the database does not answer or holds another schema.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "database_save"))]
pub async fn database_save(
    state: State<'_, AppState>,
    url: String,
    password: String,
) -> Result<DatabaseView, AppError> {
    if url.len() > 2048 || url.chars().any(char::is_control) {
        return Err(AppError::invalid(
            "a database URL is one line, such as postgres://analyst@db.example.org:5432/decima",
        ));
    }
    database::save(
        &state.data_dir,
        &url,
        Some(password.as_str()),
        decima_llm::tokens::store_counter(),
    )
    .await
    .map_err(|e| AppError::invalid(e.to_string()))?;
    view(&state).await
}

/// Goes back to this computer's file at the next start; the saved password is deleted.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "database_forget"))]
pub async fn database_forget(state: State<'_, AppState>) -> Result<DatabaseView, AppError> {
    database::forget(&state.data_dir).await?;
    view(&state).await
}

/// Hands the page what other desktops write to the shared store, from now on: each change
/// names a conversation to read again (`reconnected`: everything, since notifications sent
/// while the connection was down are lost). Nothing on a local file. Returns whether the
/// store has a feed.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "store_changes_watch"))]
pub async fn store_changes_watch(
    state: State<'_, AppState>,
    on_change: Channel<StoreChange>,
) -> Result<bool, AppError> {
    if !state.store.is_postgres() {
        return Ok(false);
    }
    // One feed per window: a reloaded page asks again and takes the channel over.
    if state.following.swap(true, Ordering::SeqCst) {
        if let Ok(mut watcher) = state.change_watcher.lock() {
            *watcher = Some(on_change);
        }
        return Ok(true);
    }
    if let Ok(mut watcher) = state.change_watcher.lock() {
        *watcher = Some(on_change);
    }
    let mut feed = match state.store.changes().await {
        Ok(Some(feed)) => feed,
        Ok(None) => return Ok(false),
        Err(e) => {
            state.following.store(false, Ordering::SeqCst);
            return Err(e.into());
        }
    };
    let watcher = std::sync::Arc::clone(&state.change_watcher);
    let following = std::sync::Arc::clone(&state.following);
    tauri::async_runtime::spawn(async move {
        loop {
            let change = match feed.next().await {
                Ok(change) => change,
                Err(e) => {
                    // The next page that asks starts a new feed; until then the window's own
                    // re-reads carry on.
                    tracing::warn!(error = %e, "the shared store's change feed stopped");
                    following.store(false, Ordering::SeqCst);
                    return;
                }
            };
            let sent = StoreChange::from(change);
            let Ok(watcher) = watcher.lock() else { return };
            if let Some(channel) = watcher.as_ref()
                && channel.send(sent).is_err()
            {
                tracing::debug!("the page stopped listening to store changes");
            }
        }
    });
    Ok(true)
}

impl From<Change> for StoreChange {
    fn from(change: Change) -> Self {
        match change {
            Change::Message { conversation, seq } => Self {
                conversation_id: Some(conversation.to_string()),
                seq: u32::try_from(seq).ok(),
                reconnected: false,
            },
            Change::Event { conversation, .. } => Self {
                conversation_id: conversation.map(|c| c.to_string()),
                seq: None,
                reconnected: false,
            },
            Change::Review { conversation } => Self {
                conversation_id: Some(conversation.to_string()),
                seq: None,
                reconnected: false,
            },
            Change::Reconnected => Self {
                conversation_id: None,
                seq: None,
                reconnected: true,
            },
        }
    }
}

async fn view(state: &AppState) -> Result<DatabaseView, AppError> {
    let saved = database::saved(&state.data_dir).url;
    let place = match saved {
        Some(_) => database::password_place(&state.data_dir).await?,
        None => None,
    };
    let (password_in_keyring, password_file) = match place {
        Some(decima_llm::secrets::SecretBackend::Keyring) => (true, None),
        Some(decima_llm::secrets::SecretBackend::File(path)) => {
            (false, Some(path.display().to_string()))
        }
        None => (false, None),
    };
    let environment = database::from_environment().map(|url| {
        decima_store::StoreLocation::parse(&url)
            .map(|l| l.redacted())
            .unwrap_or_else(|_| "an unreadable URL".to_owned())
    });
    let opened = &state.opened;
    let restart_needed = match opened.source {
        Source::Environment => false,
        Source::Settings => saved.as_deref() != Some(opened.shown.as_str()),
        Source::Local => saved.is_some() && opened.error.is_none(),
    };
    Ok(DatabaseView {
        saved_url: saved,
        from_environment: environment,
        open: opened.shown.clone(),
        shared: state.store.is_postgres(),
        password_in_keyring,
        password_file,
        restart_needed,
        open_error: opened.error.clone(),
    })
}
