//! Ctrl-C and SIGTERM, one way for every command that streams: the first asks the work to stop
//! cleanly through a cancellation token, a second quits at once. A session's end or `kill`
//! sends SIGTERM, and stopping the work cleanly is what frees what it holds (a run's lock, a
//! conversation's claim) the moment the process is gone.

use decima_runtime::agent::CancellationToken;

use super::render::note;
use crate::error::EXIT_CANCELLED;

/// The first Ctrl-C (or SIGTERM) cancels `cancel`, saying on stderr that `stopping` (what the
/// command does about it); a second one quits at once (the kernel releases a run's lock, and a
/// conversation's claim is taken over by the next process on this machine), killing the host
/// MCP servers' process groups first, since exiting runs no destructor.
pub(super) async fn cancel_on_ctrl_c(cancel: CancellationToken, stopping: &'static str) {
    let mut terminate =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    if !stop_requested(&mut terminate).await {
        return;
    }
    note(&format!(
        "\n[cancelling: {stopping}; press Ctrl-C again to quit at once]"
    ));
    cancel.cancel();
    if stop_requested(&mut terminate).await {
        decima_mcp::host_process::kill_every_host_server();
        std::process::exit(i32::from(EXIT_CANCELLED));
    }
}

/// Waits for Ctrl-C or SIGTERM; `false` when neither can be listened for.
async fn stop_requested(terminate: &mut Option<tokio::signal::unix::Signal>) -> bool {
    let term = async {
        match terminate.as_mut() {
            Some(t) => t.recv().await.is_some(),
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        c = tokio::signal::ctrl_c() => c.is_ok(),
        t = term => t,
    }
}
