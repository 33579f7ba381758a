//! Speaks to the bridge: one JSON line per request, one per reply, matched by id.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, Lines};
use tokio::sync::{Mutex, mpsc};

use super::{PythonOutcome, PythonRequest, Variable};
use crate::error::ToolError;

/// How long a kernel may take to start and answer (the first import of IPython in a cold
/// container is a second or two; a busy machine, more).
const READY_WITHIN: Duration = Duration::from_secs(90);
/// Past a call's own timeout: the bridge's interrupt grace and a restart.
const REPLY_SLACK: Duration = Duration::from_secs(60);

type Reader = Lines<BufReader<Pin<Box<dyn AsyncRead + Send>>>>;

/// A started bridge and its kernel. Calls are answered one at a time, in order.
pub struct KernelBridge {
    /// Lines for the bridge's stdin, written by a task of their own, so that an interrupt goes
    /// out while a call waits for its reply (and when the call's future is dropped).
    to_bridge: mpsc::UnboundedSender<String>,
    replies: Mutex<Reader>,
    next_id: AtomicU64,
    /// Set once the bridge's output ended or broke: the sandbox then starts a new one.
    dead: AtomicBool,
    /// The bridge found the kernel running, with the variables of earlier calls.
    attached: bool,
}

#[derive(Deserialize)]
struct Event {
    event: String,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    attached: bool,
}

#[derive(Deserialize)]
struct Tagged {
    #[serde(default)]
    id: Option<u64>,
}

#[derive(Deserialize)]
struct VariablesReply {
    #[serde(default)]
    variables: Vec<Variable>,
    #[serde(default)]
    error: Option<String>,
}

/// Sends an interrupt when a call is dropped before its reply: a cancelled run stops its cell.
struct InterruptOnDrop<'a> {
    to_bridge: &'a mpsc::UnboundedSender<String>,
    armed: bool,
}

impl Drop for InterruptOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.to_bridge.send(json!({"op": "interrupt"}).to_string());
        }
    }
}

impl KernelBridge {
    /// Starts speaking to a bridge just started on `stdin` and `stdout`, and waits for its
    /// kernel to be ready. `missing` says what to install when the bridge cannot start one.
    pub async fn start(
        mut stdin: Pin<Box<dyn AsyncWrite + Send>>,
        stdout: Pin<Box<dyn AsyncRead + Send>>,
        missing: &str,
    ) -> Result<Self, ToolError> {
        let (to_bridge, mut lines_out) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(line) = lines_out.recv().await {
                let written = async {
                    stdin.write_all(line.as_bytes()).await?;
                    stdin.write_all(b"\n").await?;
                    stdin.flush().await
                };
                if written.await.is_err() {
                    break;
                }
            }
            // The sender is gone (the bridge is dropped): closing stdin ends the bridge, which
            // shuts its kernel down.
            let _ = stdin.shutdown().await;
        });
        let mut replies = BufReader::new(stdout).lines();
        let first = tokio::time::timeout(READY_WITHIN, replies.next_line())
            .await
            .map_err(|_| {
                ToolError::system(format!(
                    "the Python kernel did not start within {} s",
                    READY_WITHIN.as_secs()
                ))
            })?
            .map_err(|e| ToolError::system(format!("the Python kernel's bridge: {e}")))?;
        let Some(first) = first else {
            return Err(ToolError::system(format!(
                "the Python kernel's bridge ended before its kernel was ready: {missing}"
            )));
        };
        let attached = match serde_json::from_str::<Event>(&first) {
            Ok(e) if e.event == "ready" => e.attached,
            Ok(e) => {
                return Err(ToolError::system(format!(
                    "the Python kernel did not start ({}): {missing}",
                    e.error.unwrap_or_default()
                )));
            }
            Err(_) => {
                return Err(ToolError::system(format!(
                    "the Python kernel's bridge said something else than it should: {missing}"
                )));
            }
        };
        Ok(Self {
            to_bridge,
            replies: Mutex::new(replies),
            next_id: AtomicU64::new(1),
            dead: AtomicBool::new(false),
            attached,
        })
    }

    /// Runs one cell.
    pub async fn execute(&self, request: &PythonRequest) -> Result<PythonOutcome, ToolError> {
        let line = self
            .ask(
                "execute",
                json!({
                    "code": request.code,
                    "timeout": request.timeout.as_secs_f64(),
                    "charts": request.charts,
                }),
                request.timeout + REPLY_SLACK,
            )
            .await?;
        serde_json::from_str(&line)
            .map_err(|e| ToolError::system(format!("the Python kernel's reply was not read: {e}")))
    }

    /// The variables in the kernel's memory.
    pub async fn variables(&self) -> Result<Vec<Variable>, ToolError> {
        let line = self
            .ask("variables", json!({}), Duration::from_secs(20))
            .await?;
        let reply: VariablesReply = serde_json::from_str(&line)
            .map_err(|e| ToolError::system(format!("the kernel's variables were not read: {e}")))?;
        match reply.error {
            Some(e) if !e.is_empty() => Err(ToolError::system(format!(
                "the kernel's variables were not listed: {e}"
            ))),
            _ => Ok(reply.variables),
        }
    }

    /// Starts the kernel again: every variable is gone (after a rollback, the cells kept since
    /// the snapshot are run again on the new kernel).
    pub async fn restart(&self) -> Result<(), ToolError> {
        self.ask("restart", json!({}), READY_WITHIN)
            .await
            .map(|_| ())
    }

    /// Sends one request and waits for the reply with its id; replies to earlier calls that
    /// were dropped (a cancelled run) are passed over.
    async fn ask(
        &self,
        op: &str,
        mut body: serde_json::Value,
        within: Duration,
    ) -> Result<String, ToolError> {
        let mut replies = self.replies.lock().await;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        body["op"] = json!(op);
        body["id"] = json!(id);
        self.to_bridge.send(body.to_string()).map_err(|_| {
            self.dead.store(true, Ordering::Relaxed);
            gone("its input is closed")
        })?;
        let mut guard = InterruptOnDrop {
            to_bridge: &self.to_bridge,
            armed: op == "execute",
        };
        let wait = async {
            loop {
                let next = replies.next_line().await;
                let Ok(Some(line)) = next else {
                    self.dead.store(true, Ordering::Relaxed);
                    return Err(match next {
                        Err(e) => gone(&e.to_string()),
                        Ok(_) => gone("it ended"),
                    });
                };
                match serde_json::from_str::<Tagged>(&line) {
                    Ok(Tagged { id: Some(n) }) if n == id => return Ok(line),
                    _ => continue,
                }
            }
        };
        let reply = tokio::time::timeout(within, wait).await.map_err(|_| {
            ToolError::system(format!(
                "the Python kernel did not answer within {} s",
                within.as_secs()
            ))
        })?;
        guard.armed = false;
        reply
    }

    /// Whether the bridge found its kernel already running (its variables kept), rather than
    /// starting one.
    #[must_use]
    pub fn attached(&self) -> bool {
        self.attached
    }

    /// Whether the bridge stopped: its process ended, or its input or output broke.
    #[must_use]
    pub fn is_dead(&self) -> bool {
        self.dead.load(Ordering::Relaxed) || self.to_bridge.is_closed()
    }
}

fn gone(why: &str) -> ToolError {
    ToolError::system(format!(
        "the Python kernel's bridge stopped ({why}); the next call starts a new kernel, \
         without the variables of earlier calls"
    ))
}
