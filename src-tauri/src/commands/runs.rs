//! Agent runs from the window: start one, stop it, answer its failure, recover or resume an
//! execution left waiting or interrupted. Each run's events stream through the channel the
//! webview passes in; the command itself returns the run's id at once.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use decima_runtime::agent::{self, RunOutcome, RunRequest, Session};
use decima_runtime::{conversation_options, preferences};
use decima_store::{ExecutionStatus, Resolution, Store};
use tauri::State;
use tauri::ipc::Channel;
use tracing::Instrument;

use crate::dto::RunUpdate;
use crate::runs::{ChannelSink, ChoiceRefused, LiveRun, Runs};
use crate::{AppError, AppState};

/// Starts an agent run on `task`, in the conversation (or a new one titled from the task).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "run_start"))]
pub async fn run_start(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    conversation_id: Option<String>,
    task: String,
    rewind_from: Option<u32>,
    on_event: Channel<RunUpdate>,
) -> Result<String, AppError> {
    let conversation = conversation_id
        .as_deref()
        .map(super::conversation_id)
        .transpose()?;
    if task.trim().is_empty() {
        return Err(AppError::invalid(
            "the task is empty: say what the agent should do",
        ));
    }
    if let Some(id) = conversation {
        // A clear error now rather than a failed run later: a missing conversation, or one in
        // use (the runtime checks again, atomically, when the run starts).
        state.store.conversations().get(id).await?;
        if let Some(busy) = state.store.claims().busy(id).await? {
            return Err(decima_store::StoreError::Busy(Box::new(busy)).into());
        }
        if let Some(seq) = rewind_from {
            rewind(&state.store, id, seq).await?;
        }
    } else if rewind_from.is_some() {
        return Err(AppError::invalid(
            "only a conversation's own messages can be run again",
        ));
    }
    // The conversation's own run options over the settings', checked now: a removed provider
    // is an error the user can act on.
    let chosen = preferences::load(&state.store).await?;
    let own = match conversation {
        Some(id) => conversation_options::load(&state.store, id).await?,
        None => conversation_options::ConversationOptions::default(),
    };
    let in_force = own.in_force(&state.store, &chosen).await?;
    let provider = in_force.provider;
    has_a_provider(
        &state.store,
        provider.as_deref(),
        std::env::var_os("DECIMA_PROVIDER_KIND").is_some(),
    )
    .await?;
    let reviewer_provider = chosen.reviewer_in_force(&state.store).await?;
    let sandbox = in_force.sandbox;
    let defaults = agent::RunOptions::default();
    let max_steps = in_force.max_steps.unwrap_or(defaults.max_steps);
    // A quick chat has no review; else the conversation's choice, the provider's default, then
    // the runtime's.
    let quick = in_force.quick;
    let tenth_man = match in_force.tenth_man {
        _ if quick => decima_runtime::review::TenthManMode::Off,
        Some(mode) => mode,
        None => {
            decima_runtime::providers::tenth_man_default(&state.store, provider.as_deref()).await?
        }
    };
    let workspace = in_force.workspace;
    Ok(spawn_run(&state, app, on_event, provider, move |session| {
        Box::pin(async move {
            agent::run(
                session,
                RunRequest {
                    conversation,
                    // A chosen folder is where host runs work; a Docker run's workspace lives
                    // in its container.
                    workspace: match sandbox {
                        decima_store::SandboxKind::Host => workspace,
                        decima_store::SandboxKind::Docker => None,
                    },
                    task,
                    sandbox,
                    options: agent::RunOptions {
                        reviewer_provider,
                        max_steps,
                        tenth_man,
                        quick,
                        ..agent::RunOptions::default()
                    },
                },
            )
            .await
        })
    }))
}

/// Edit-and-run-again and regenerate: the conversation's last user message and everything
/// after it leave the live history (soft-deleted, so they stay in the database as the record of
/// what was there), and the run that follows starts from the task again. Only the last user
/// message may be the point: an earlier one would drop answers the analyst did not see go.
async fn rewind(
    store: &decima_store::Store,
    conversation: decima_core::ConversationId,
    seq: u32,
) -> Result<(), AppError> {
    let last = store
        .messages()
        .last_live_of_role(conversation, decima_core::Role::User)
        .await?;
    if last != Some(i64::from(seq)) {
        return Err(AppError::invalid(
            "only the last message you sent can be edited or run again; the conversation \
             moved on, so read it again first",
        ));
    }
    let hidden = store
        .messages()
        .soft_delete_after(conversation, i64::from(seq) - 1)
        .await?;
    tracing::info!(hidden, "messages set aside to run the last task again");
    Ok(())
}

/// Stops a run: the model's stream is dropped, a running command's process group is killed,
/// and the execution ends `cancelled` (or stays waiting, when it waited for a choice).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "run_stop"))]
pub async fn run_stop(state: State<'_, AppState>, run_id: String) -> Result<(), AppError> {
    let run = live(&state.runs, &run_id)?;
    run.cancel.cancel();
    Ok(())
}

/// Skips the final review of a run this window is running: the answer stands, unreviewed, and
/// the run ends at once. `false` when no final review of that execution is running.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "run_skip_review"))]
pub async fn run_skip_review(execution_id: String) -> Result<bool, AppError> {
    let id = execution_id
        .parse()
        .map_err(|_| AppError::invalid("that is not an execution id"))?;
    Ok(decima_runtime::agent::skip_final_review(id))
}

/// Answers the failure a live run waits on with one of the choices it offers, and the
/// analyst's guidance with it (stored as their message); any other choice is
/// refused and the run keeps waiting. For unlinked figures, `figures` names the ones the
/// choice is for (from 1, in the report's order; none is all of them) and `value` is a
/// correction's right value.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "run_choose"))]
pub async fn run_choose(
    state: State<'_, AppState>,
    run_id: String,
    choice: Resolution,
    guidance: Option<String>,
    figures: Vec<u32>,
    value: Option<String>,
) -> Result<(), AppError> {
    let choice = figure_choice(choice, guidance.as_deref(), figures, value)?;
    let run = live(&state.runs, &run_id)?;
    match run.choices.choose(choice) {
        Ok(()) => Ok(()),
        Err(ChoiceRefused::NotOffered(e)) => Err(e.into()),
        Err(ChoiceRefused::NotWaiting) => Err(AppError::invalid(
            "this run is not waiting for a choice (it may have been answered already)",
        )),
    }
}

/// Answers the MCP call a live run waits to have approved: `once`, `conversation` (this
/// conversation from now on), `always` (this tool of this server), or `deny`.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "run_approve"))]
pub async fn run_approve(
    state: State<'_, AppState>,
    run_id: String,
    answer: decima_runtime::mcp::Approval,
) -> Result<(), AppError> {
    let run = live(&state.runs, &run_id)?;
    run.choices.approve(answer).map_err(|_| {
        AppError::invalid(
            "this run is not waiting for an approval (it may have been answered already)",
        )
    })
}

/// Continues an execution that waits for a choice and has no live run (it stopped waiting
/// when the app closed, or was started from the CLI).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "execution_recover"))]
// A Tauri command's parameters are the webview's arguments, one by one.
#[allow(clippy::too_many_arguments)]
pub async fn execution_recover(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    execution_id: String,
    choice: Resolution,
    guidance: Option<String>,
    figures: Vec<u32>,
    value: Option<String>,
    on_event: Channel<RunUpdate>,
) -> Result<String, AppError> {
    let choice = figure_choice(choice, guidance.as_deref(), figures, value)?;
    let execution = super::execution_id(&execution_id)?;
    state.store.executions().get(execution).await?;
    // Refused here, before a run starts: the failure stays unresolved and waiting.
    agent::check_choice(&state.store, execution, choice.resolution).await?;
    Ok(spawn_run(&state, app, on_event, None, move |session| {
        Box::pin(async move { agent::recover(session, execution, choice).await })
    }))
}

/// Continues an interrupted execution from its last stored state.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "execution_resume"))]
pub async fn execution_resume(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    execution_id: String,
    on_event: Channel<RunUpdate>,
) -> Result<String, AppError> {
    let execution = super::execution_id(&execution_id)?;
    state.store.executions().get(execution).await?;
    Ok(spawn_run(&state, app, on_event, None, move |session| {
        Box::pin(async move { agent::resume(session, execution).await })
    }))
}

fn live(runs: &Runs, run_id: &str) -> Result<Arc<LiveRun>, AppError> {
    runs.get(run_id).ok_or_else(|| {
        AppError::not_found("this run is not running any more (it ended, or the app restarted)")
    })
}

type RunFuture<'a> =
    std::pin::Pin<Box<dyn Future<Output = decima_runtime::Result<RunOutcome>> + Send + 'a>>;

/// Registers a run, starts it in the background with its events going to `channel`, and
/// returns its id. The last event is always `runEnded`. `provider` is the one a new run uses;
/// `None` for a resumed one, which keeps the provider it started with.
fn spawn_run(
    state: &AppState,
    app: tauri::AppHandle,
    channel: Channel<RunUpdate>,
    provider: Option<String>,
    work: impl for<'s> FnOnce(&'s Session<'s>) -> RunFuture<'s> + Send + 'static,
) -> String {
    let (run_id, run) = state.runs.start();
    let store: Store = state.store.clone();
    let data_dir: PathBuf = state.data_dir.clone();
    let runs = Arc::clone(&state.runs);
    let span = tracing::info_span!("run", run = %run_id);
    let id = run_id.clone();
    tauri::async_runtime::spawn(
        async move {
            let sink = ChannelSink::new(channel, app);
            let session = Session {
                store: &store,
                data_dir: &data_dir,
                provider: provider.as_deref(),
                events: &sink,
                choices: &run.choices,
                cancel: run.cancel.clone(),
            };
            let ended = match work(&session).await {
                Ok(outcome) => RunUpdate::Ended {
                    status: Some(outcome.execution.status),
                    answer: outcome.answer,
                    error: None,
                },
                Err(e) => {
                    tracing::warn!(error = %e, "run ended in an error");
                    RunUpdate::Ended {
                        status: None,
                        answer: None,
                        error: Some(AppError::from(e)),
                    }
                }
            };
            runs.end(&id);
            if sink.was_long()
                && let RunUpdate::Ended { status, .. } = &ended
            {
                let body = match status {
                    Some(ExecutionStatus::Succeeded) => "The run finished.",
                    Some(ExecutionStatus::AwaitingUser) => "The run waits for your choice.",
                    Some(_) => "The run stopped.",
                    None => "The run ended in an error.",
                };
                sink.notify_unless_focused("Decima", body);
            }
            sink.send(ended);
            // After the window has its answer: the snapshots of finished executions are garbage.
            if let Err(e) = agent::collect_snapshots(&store, &data_dir).await {
                tracing::warn!(error = %e, "cannot collect workspace snapshots");
            }
        }
        .instrument(span),
    );
    run_id
}

/// Refuses, in the window's words, a run with no provider to use: none set up, or several with
/// none chosen for the conversation or as the default. The runtime takes the only provider when
/// there is one, and one defined by `DECIMA_*` variables (`from_env`) when there is none; its own
/// message for several names a CLI flag.
async fn has_a_provider(
    store: &Store,
    chosen: Option<&str>,
    from_env: bool,
) -> Result<(), AppError> {
    if chosen.is_some() {
        return Ok(());
    }
    match store.providers().list().await?.len() {
        1 => Ok(()),
        0 if from_env => Ok(()),
        set_up => Err(AppError::no_provider(set_up > 1)),
    }
}

/// A choice, for some of a failure's figures when it names them, with a correction's value.
fn figure_choice(
    choice: Resolution,
    guidance: Option<&str>,
    figures: Vec<u32>,
    value: Option<String>,
) -> Result<agent::Choice, AppError> {
    Ok(agent::Choice::new(choice, guidance)?
        .for_figures(figures.into_iter().map(|n| n as usize).collect())
        .with_value(value.filter(|v| !v.trim().is_empty())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use decima_store::NewProvider;

    fn provider(name: &str) -> NewProvider {
        NewProvider {
            name: name.to_owned(),
            kind: "openai".to_owned(),
            preset: None,
            base_url: "http://127.0.0.1:9/v1".to_owned(),
            model: "qwen3".to_owned(),
            context_window: 32_000,
            settings: serde_json::Value::Null,
        }
    }

    #[tokio::test]
    async fn a_run_without_a_chosen_provider_is_refused_unless_one_is_set_up() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_in_dir(dir.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        let code = |r: Result<(), AppError>| r.err().map(|e| e.code);
        assert_eq!(
            code(has_a_provider(&store, None, false).await),
            Some(crate::error::ErrorCode::NoProvider)
        );
        assert_eq!(code(has_a_provider(&store, None, true).await), None);
        store.providers().create(provider("local")).await.unwrap();
        assert_eq!(code(has_a_provider(&store, None, false).await), None);
        store.providers().create(provider("careful")).await.unwrap();
        let several = has_a_provider(&store, None, false).await.unwrap_err();
        assert_eq!(several.code, crate::error::ErrorCode::NoDefaultProvider);
        assert!(!several.message.contains("--"), "{}", several.message);
        assert_eq!(
            code(has_a_provider(&store, None, true).await),
            Some(crate::error::ErrorCode::NoDefaultProvider)
        );
        assert_eq!(
            code(has_a_provider(&store, Some("careful"), false).await),
            None
        );
    }
}
