//! Ctrl-C and the platform's other ways to ask a process to stop, one way for every command
//! that streams: the first asks the work to stop cleanly through a cancellation token, a second
//! quits at once. On unix that other way is SIGTERM (a session's end, or `kill`); on Windows it
//! is Ctrl-Break and the console window being closed. Stopping the work cleanly is what frees
//! what it holds (a run's lock, a conversation's claim) the moment the process is gone.

use decima_runtime::agent::CancellationToken;

use super::render::note;
use crate::error::EXIT_CANCELLED;

/// The first Ctrl-C (or SIGTERM; Ctrl-Break or closing the console on Windows) cancels
/// `cancel`, saying on stderr that `stopping` (what the command does about it); a second one
/// quits at once (the system releases a run's lock, and a conversation's claim is taken over
/// by the next process on this machine), killing the host MCP servers' process groups first,
/// since exiting runs no destructor.
pub(super) async fn cancel_on_ctrl_c(cancel: CancellationToken, stopping: &'static str) {
    let mut others = platform::OtherStops::listen();
    if !stop_requested(&mut others).await {
        return;
    }
    note(&format!(
        "\n[cancelling: {stopping}; press Ctrl-C again to quit at once]"
    ));
    cancel.cancel();
    if stop_requested(&mut others).await {
        decima_mcp::host_process::kill_every_host_server();
        std::process::exit(i32::from(EXIT_CANCELLED));
    }
}

/// Waits for Ctrl-C or one of the platform's other requests to stop; `false` when Ctrl-C
/// cannot be listened for.
async fn stop_requested(others: &mut platform::OtherStops) -> bool {
    tokio::select! {
        c = tokio::signal::ctrl_c() => c.is_ok(),
        o = others.recv() => o,
    }
}

/// Unix: SIGTERM.
#[cfg(unix)]
mod platform {
    use tokio::signal::unix::{Signal, SignalKind, signal};

    /// The requests to stop besides Ctrl-C that this platform sends.
    pub(super) struct OtherStops {
        terminate: Option<Signal>,
    }

    impl OtherStops {
        /// Starts listening; a request that cannot be listened for is never heard.
        pub(super) fn listen() -> Self {
            Self {
                terminate: signal(SignalKind::terminate()).ok(),
            }
        }

        /// The next request: `true` when one came, `false` when the platform stopped sending
        /// them; never resolves when none can be listened for.
        pub(super) async fn recv(&mut self) -> bool {
            match self.terminate.as_mut() {
                Some(t) => t.recv().await.is_some(),
                None => std::future::pending().await,
            }
        }
    }
}

/// Windows: Ctrl-Break, and the console window being closed (which ends the process a few
/// seconds later whatever it does, time enough to stop cleanly).
#[cfg(windows)]
mod platform {
    use tokio::signal::windows::{CtrlBreak, CtrlClose, ctrl_break, ctrl_close};

    /// The requests to stop besides Ctrl-C that this platform sends.
    pub(super) struct OtherStops {
        brk: Option<CtrlBreak>,
        close: Option<CtrlClose>,
    }

    impl OtherStops {
        /// Starts listening; a request that cannot be listened for is never heard.
        pub(super) fn listen() -> Self {
            Self {
                brk: ctrl_break().ok(),
                close: ctrl_close().ok(),
            }
        }

        /// The next request: `true` when one came, `false` when the platform stopped sending
        /// them; never resolves when none can be listened for.
        pub(super) async fn recv(&mut self) -> bool {
            let brk = async {
                match self.brk.as_mut() {
                    Some(b) => b.recv().await.is_some(),
                    None => std::future::pending().await,
                }
            };
            let close = async {
                match self.close.as_mut() {
                    Some(c) => c.recv().await.is_some(),
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                b = brk => b,
                c = close => c,
            }
        }
    }
}
