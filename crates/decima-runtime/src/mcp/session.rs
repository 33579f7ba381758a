//! A run's MCP servers: started together when the run starts (each within its own startup
//! timeout, none waiting on another), their tools offered through the registry under table
//! names, and shut down when the run ends. A server that does not start costs the run its
//! tools and a warning, never the run.

use decima_sandbox::Sandbox;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use decima_core::{ConversationId, FailureClass};
use decima_llm::{Protocol, ToolSpec};
use decima_mcp::client::{HostContext, log_path};
use decima_mcp::host_process::ServerProcess;
use decima_mcp::schema::{Dialect, adapt};
use decima_mcp::{
    McpClient, McpError, McpOutput, McpTool, Place, ServerConfig, ToolTable, Transport,
};
use decima_sandbox::DockerSandbox;
use decima_sandbox::docker::AttachedHandle;
use decima_sandbox::host::BoxFuture;
use decima_store::Store;
use futures_util::future::join_all;
use tracing::{Instrument as _, debug, info, info_span, warn};

use crate::docker::LazyDocker;
use crate::error::Result;
use crate::events::{Event, EventSink};
use crate::tools::{AgentTool, ToolCallContext, ToolOutcome};

/// Text past this many bytes is saved to a file and shown as a head and a tail, as `shell`'s
/// output is.
const OUTPUT_CAP: usize = 1024 * 1024;
/// Bytes of the head and of the tail shown of a capped result.
const PREVIEW: usize = 16 * 1024;
/// Where results' images and capped text are saved, relative to a host workspace.
const SAVED_DIR: &str = ".decima/mcp";

/// One offered tool: the server it belongs to and what it says about itself.
#[derive(Clone)]
pub struct OfferedTool {
    /// The server's name.
    pub server: String,
    /// The tool as the server listed it.
    pub tool: McpTool,
    client: Arc<McpClient>,
}

/// The servers of one run.
#[derive(Default)]
pub struct McpSession {
    clients: Vec<Arc<McpClient>>,
    table: ToolTable,
    offered: BTreeMap<String, OfferedTool>,
    /// The run's provider protocol: how schemas are sent and whether images are shown.
    protocol: Option<Protocol>,
}

/// What a run's servers need to start.
pub struct StartRequest<'a> {
    /// The store (the server list, the conversation's switches).
    pub store: &'a Store,
    /// The data directory (secret values, stderr logs).
    pub data_dir: &'a Path,
    /// The conversation whose switches apply.
    pub conversation: ConversationId,
    /// A host workspace: where host servers start. `None` for a Docker run. (Results' files
    /// are saved through the run's sandbox, wherever it is.)
    pub host_workspace: Option<&'a Path>,
    /// The provider's protocol, which decides how schemas are sent.
    pub protocol: Protocol,
    /// The run's Docker sandbox, when it runs in one; servers placed in Docker use it.
    pub docker: Option<Arc<LazyDocker>>,
    /// The conversation whose container a host run's Docker-placed servers start in (the
    /// root of its tree of subagents).
    pub root_conversation: ConversationId,
    /// Where warnings go.
    pub events: &'a dyn EventSink,
}

impl McpSession {
    /// Starts every enabled server the conversation did not switch off, side by side.
    pub async fn start(request: StartRequest<'_>) -> Result<Self> {
        let wanted = wanted_servers(&request).await?;
        let mut session = Self {
            protocol: Some(request.protocol),
            ..Self::default()
        };
        if wanted.is_empty() {
            return Ok(session);
        }
        let started = Instant::now();
        let logs = request.data_dir.join("logs").join("mcp");
        let workspace = host_servers_folder(&request).await;
        let sandbox = if wanted.iter().any(placed_in_docker) {
            Some(docker_sandbox(&request).await)
        } else {
            None
        };
        let starts = wanted.iter().map(|config| {
            let host = HostContext {
                workspace: workspace.clone(),
                log: Some(log_path(&logs, &config.name)),
            };
            start_server(config, host, sandbox.clone(), request.data_dir)
        });
        let span = info_span!("mcp.servers", count = wanted.len());
        for (config, connected) in join_all(starts).instrument(span).await {
            session.add_started(config, connected, &logs, &request);
        }
        info!(
            servers = session.clients.len(),
            tools = session.offered.len(),
            ms = started.elapsed().as_millis() as u64,
            "MCP servers ready"
        );
        Ok(session)
    }

    /// Takes one server's start: records its status, then offers the tools it lists that its
    /// config lets through, or warns that it did not start.
    fn add_started(
        &mut self,
        config: &ServerConfig,
        connected: std::result::Result<McpClient, McpError>,
        logs: &Path,
        request: &StartRequest<'_>,
    ) {
        let state = match &connected {
            Ok(client) => super::status::ready(
                &super::servers::priced(&config.name, client.tools()),
                client.started_in,
            ),
            Err(e) => super::status::failed(&e.to_string(), &log_path(logs, &config.name)),
        };
        super::status::record(request.data_dir, &config.name, &state);
        match connected {
            Ok(client) => {
                let client = Arc::new(client);
                for tool in client.tools() {
                    if !config.offers(&tool.name) {
                        continue;
                    }
                    let name = self.table.insert(&config.name, &tool.name);
                    self.offered.insert(
                        name,
                        OfferedTool {
                            server: config.name.clone(),
                            tool: tool.clone(),
                            client: client.clone(),
                        },
                    );
                }
                self.clients.push(client);
            }
            Err(e) => {
                warn!(server = %config.name, error = %e, "an MCP server did not start");
                request.events.emit(Event::Warning {
                    message: format!("{e}; its tools are not offered in this run"),
                });
            }
        }
    }

    /// The offered tools, for the registry.
    pub fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.offered
            .iter()
            .map(|(name, offered)| {
                Arc::new(McpToolHandle {
                    offered_name: name.clone(),
                    offered: offered.clone(),
                    protocol: self.protocol.unwrap_or(Protocol::OpenAi),
                }) as Arc<dyn AgentTool>
            })
            .collect()
    }

    /// The server and tool an offered name stands for, when it is an MCP tool of this run.
    pub fn resolve(&self, offered: &str) -> Option<&OfferedTool> {
        self.offered.get(offered)
    }

    /// The servers that started, by name.
    pub fn server_names(&self) -> Vec<String> {
        self.clients.iter().map(|c| c.name().to_owned()).collect()
    }

    /// Whether the run has any MCP tool.
    pub fn is_empty(&self) -> bool {
        self.offered.is_empty()
    }

    /// Closes every connection and stops what is left of host servers.
    pub async fn shutdown(&self) {
        join_all(self.clients.iter().map(|c| c.shutdown())).await;
    }
}

/// The servers to start: those enabled that the conversation did not switch off.
async fn wanted_servers(request: &StartRequest<'_>) -> Result<Vec<ServerConfig>> {
    let servers = super::servers::list(request.store, request.data_dir).await?;
    let off = request
        .store
        .mcp_servers()
        .switched_off(request.conversation)
        .await?;
    Ok(servers
        .into_iter()
        .filter(|s| s.enabled && !off.contains(&s.name))
        .collect())
}

/// Where host servers start: the run's host workspace, or for a Docker run a folder of their
/// own, not the data directory (which holds the database and the key file).
async fn host_servers_folder(request: &StartRequest<'_>) -> PathBuf {
    match request.host_workspace {
        Some(w) => w.to_path_buf(),
        None => {
            let dir = request.data_dir.join("mcp").join("host");
            let _ = tokio::fs::create_dir_all(&dir).await;
            dir
        }
    }
}

/// Starts one server, in the Docker sandbox or on this computer as its config places it, with
/// its status saying it is starting meanwhile.
async fn start_server<'c>(
    config: &'c ServerConfig,
    host: HostContext,
    sandbox: Option<std::result::Result<Arc<DockerSandbox>, String>>,
    data_dir: &Path,
) -> (&'c ServerConfig, std::result::Result<McpClient, McpError>) {
    let log = host.log.clone();
    super::status::record(
        data_dir,
        &config.name,
        &super::status::starting(config.startup_timeout()),
    );
    let connected = if placed_in_docker(config) {
        match sandbox {
            Some(Ok(sandbox)) => start_in_docker(config, &sandbox, log).await,
            Some(Err(e)) => Err(docker_unavailable(&e)),
            None => Err(McpError::Config("no Docker sandbox".into())),
        }
    } else {
        let token = bearer_token(config);
        McpClient::connect(config, &host, token.as_deref()).await
    };
    (config, connected)
}

/// Whether a server runs in the conversation's Docker sandbox.
fn placed_in_docker(config: &ServerConfig) -> bool {
    matches!(
        config.transport,
        Transport::Stdio {
            place: Place::Docker,
            ..
        }
    )
}

/// The run's Docker sandbox, or for a host run a container whose `/workspace` is the run's
/// folder, connected; an engine that cannot be reached is the error every Docker-placed
/// server reports.
async fn docker_sandbox(
    request: &StartRequest<'_>,
) -> std::result::Result<Arc<DockerSandbox>, String> {
    let lazy = match (&request.docker, request.host_workspace) {
        (Some(lazy), _) => lazy.clone(),
        (None, Some(folder)) => Arc::new(
            LazyDocker::beside_host(
                request.store,
                request.data_dir,
                request.root_conversation,
                folder,
            )
            .await
            .map_err(|e| e.to_string())?,
        ),
        (None, None) => Arc::new(
            LazyDocker::new(request.store, request.data_dir, request.root_conversation)
                .await
                .map_err(|e| e.to_string())?,
        ),
    };
    lazy.get().await.map_err(|e| e.to_string())
}

fn docker_unavailable(detail: &str) -> McpError {
    McpError::Config(format!(
        "the Docker sandbox that MCP servers placed in Docker run in is not available ({detail}); \
         start the engine, or run the server on this computer (\"on this machine\" in \
         Settings > MCP, --where host on the command line)"
    ))
}

/// Starts a stdio server inside the sandbox container as an attached exec: it sees
/// `/workspace` and the container's network setting, and is stopped through its process group.
/// Refuses a server whose program the sandbox image does not have, naming it and what to do:
/// started anyway, it dies at once and its stderr says only "not found".
async fn missing_in_sandbox(
    config: &ServerConfig,
    program: &str,
    sandbox: &Arc<DockerSandbox>,
) -> std::result::Result<(), McpError> {
    let quoted = format!("'{}'", program.replace('\'', r"'\''"));
    let found = sandbox
        .exec(decima_sandbox::host::ShellRequest::new(format!(
            "command -v {quoted} >/dev/null 2>&1"
        )))
        .await;
    match found {
        Ok(outcome) if outcome.exit_code != Some(0) => Err(McpError::Start {
            server: config.name.clone(),
            message: format!(
                "{program:?} is not in the sandbox image, so it cannot start there: run the \
                 server on this computer (\"on this machine\" in Settings > MCP, --where host \
                 on the command line), or use an image that has it"
            ),
        }),
        // A check that could not run says nothing: the start below reports what fails.
        _ => Ok(()),
    }
}

pub(crate) async fn start_in_docker(
    config: &ServerConfig,
    sandbox: &Arc<DockerSandbox>,
    log: Option<PathBuf>,
) -> std::result::Result<McpClient, McpError> {
    let Transport::Stdio {
        command,
        args,
        env,
        cwd,
        ..
    } = &config.transport
    else {
        return Err(McpError::Config(
            "only stdio servers run in a sandbox".into(),
        ));
    };
    missing_in_sandbox(config, command, sandbox).await?;
    let mut argv = vec![command.clone()];
    argv.extend(args.iter().cloned());
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let attached = sandbox
        .spawn_attached(&argv, &env, cwd.as_deref())
        .await
        .map_err(|e| McpError::Start {
            server: config.name.clone(),
            message: format!("it could not be started in the Docker sandbox: {e}"),
        })?;
    let stderr = decima_mcp::host_process::keep_stderr(attached.stderr, log);
    let stdin = SharedStdin(Arc::new(std::sync::Mutex::new(attached.stdin)));
    let process = Box::new(InContainer {
        handle: attached.handle,
        stdin: stdin.clone(),
    });
    McpClient::attach(config, attached.stdout, stdin, stderr, Some(process)).await
}

/// How long a server in the sandbox has to exit after its stdin closed, before its group is
/// killed.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

type Stdin = std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>;

/// An exec's stdin, shared by the connection (which writes) and the stop (which closes it):
/// the SDK closes a connection by dropping its writer, and dropping one half of the engine's
/// attached stream sends no end of file, so a server would wait on its stdin until killed.
#[derive(Clone)]
struct SharedStdin(Arc<std::sync::Mutex<Stdin>>);

impl SharedStdin {
    fn poll<T>(
        &self,
        f: impl FnOnce(std::pin::Pin<&mut Stdin>) -> std::task::Poll<std::io::Result<T>>,
    ) -> std::task::Poll<std::io::Result<T>> {
        let mut inner = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(std::pin::Pin::new(&mut *inner))
    }
}

impl tokio::io::AsyncWrite for SharedStdin {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.poll(|w| w.poll_write(cx, buf))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.poll(|w| w.poll_flush(cx))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.poll(|w| w.poll_shutdown(cx))
    }
}

/// A server's process in the sandbox container.
struct InContainer {
    handle: AttachedHandle,
    stdin: SharedStdin,
}

impl ServerProcess for InContainer {
    fn stop(self: Box<Self>) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        Box::pin(async move {
            // Its stdin is closed, as a host server's is; one that has not exited a moment
            // later has its group killed.
            let mut stdin = self.stdin.clone();
            let closed = tokio::time::timeout(std::time::Duration::from_millis(500), async {
                tokio::io::AsyncWriteExt::shutdown(&mut stdin).await
            })
            .await;
            if !matches!(closed, Ok(Ok(()))) {
                debug!("the stdin of an MCP server in the sandbox did not close");
            }
            let deadline = std::time::Instant::now() + EXIT_GRACE;
            while !self.handle.exited() && std::time::Instant::now() < deadline {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            if let Err(e) = self.handle.kill().await {
                warn!(error = %e, "an MCP server in the sandbox could not be stopped");
            }
        })
    }

    fn exited(&mut self) -> bool {
        self.handle.exited()
    }
}

/// An HTTP server's bearer token (without `Bearer `): the one kept in the secret store, else
/// the environment variable its configuration names.
pub(crate) fn bearer_token(config: &ServerConfig) -> Option<String> {
    match &config.transport {
        Transport::Http {
            bearer_token,
            bearer_token_env,
            ..
        } => bearer_token
            .clone()
            .filter(|t| !t.is_empty())
            .or_else(|| {
                bearer_token_env
                    .as_ref()
                    .and_then(|var| std::env::var(var).ok())
            })
            .filter(|t| !t.is_empty()),
        Transport::Stdio { .. } => None,
    }
}

/// One MCP tool in the registry.
struct McpToolHandle {
    offered_name: String,
    offered: OfferedTool,
    protocol: Protocol,
}

impl AgentTool for McpToolHandle {
    fn spec(&self) -> ToolSpec {
        let tool = &self.offered.tool;
        let mut description = format!("(MCP server {}) {}", self.offered.server, tool.description);
        if tool.read_only == Some(true) {
            description.push_str(" [read-only]");
        }
        ToolSpec {
            name: self.offered_name.clone(),
            description,
            parameters: adapt(
                &tool.input_schema,
                match self.protocol {
                    // Ollama takes OpenAI's function schemas.
                    Protocol::OpenAi | Protocol::Ollama => Dialect::OpenAi,
                    Protocol::Anthropic => Dialect::Anthropic,
                },
            ),
        }
    }

    fn call<'a>(&'a self, call: ToolCallContext<'a>) -> BoxFuture<'a, ToolOutcome> {
        let span = info_span!(
            "mcp.call",
            server = %self.offered.server,
            tool = %self.offered.tool.name
        );
        Box::pin(
            async move {
                let started = Instant::now();
                let serde_json::Value::Object(map) = call.arguments else {
                    return ToolOutcome::failed(
                        FailureClass::Data,
                        "the arguments must be one JSON object",
                        started.elapsed(),
                    );
                };
                // The run's cancellation abandons the call, which tells the server
                // (`notifications/cancelled`).
                match self
                    .offered
                    .client
                    .call(&self.offered.tool.name, map.clone(), call.cancel)
                    .await
                {
                    Ok(output) => self.outcome(output, call.sandbox.as_ref(), started).await,
                    Err(e) => ToolOutcome::failed(e.class(), &e.to_string(), started.elapsed()),
                }
            }
            .instrument(span),
        )
    }

    fn changes_workspace(&self) -> bool {
        true
    }
}

impl McpToolHandle {
    /// A result as the model gets it: each image saved in the workspace (through the run's
    /// sandbox, host or Docker), named in the text, and kept with the result (shown to a model
    /// that takes images in tool results); long text capped with the whole saved.
    async fn outcome(
        &self,
        output: McpOutput,
        sandbox: &dyn Sandbox,
        started: Instant,
    ) -> ToolOutcome {
        let McpOutput {
            mut text,
            images,
            is_error,
        } = output;
        let stem = format!("{}-{}", self.offered_name, decima_core::Timestamp::now().0);
        let mut kept = Vec::with_capacity(images.len());
        for (i, image) in images.into_iter().enumerate() {
            let ext: String = image
                .mime
                .rsplit('/')
                .next()
                .unwrap_or("bin")
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .take(8)
                .collect();
            let part =
                decima_llm::images::tool_result_image(self.protocol, &image.mime, &image.data);
            let bytes = image.data.len();
            let note = match save(sandbox, &format!("{stem}-{}.{ext}", i + 1), image.data).await {
                Ok(path) => format!("saved in the workspace as {path}"),
                Err(e) => format!("not saved: {e}"),
            };
            // The marker where the result had the image says where it is now.
            let marker =
                |saved| decima_mcp::content::image_marker(i + 1, &image.mime, bytes, saved);
            let placed = marker(None);
            let said = marker(Some(&note));
            text = match text.find(&placed) {
                Some(at) => format!("{}{said}{}", &text[..at], &text[at + placed.len()..]),
                None => format!("{text}\n{said}"),
            };
            // A type that is no image (a server's mistake) stays a note in the text.
            if part.media_type.starts_with("image/") && part.media_type.len() <= 100 {
                kept.push(part);
            }
        }
        if text.len() > OUTPUT_CAP {
            let whole = save(sandbox, &format!("{stem}.txt"), text.clone().into_bytes()).await;
            text = capped(&text, whole.ok().as_deref());
        }
        let duration = started.elapsed();
        let outcome = if is_error {
            ToolOutcome::failed(FailureClass::Data, &text, duration)
        } else {
            ToolOutcome::ok(text, duration)
        };
        ToolOutcome {
            images: kept,
            ..outcome
        }
    }
}

/// Writes a file under the saved folder of the workspace; its path relative to the workspace.
async fn save(sandbox: &dyn Sandbox, file: &str, bytes: Vec<u8>) -> Result<String, String> {
    let path = format!("{SAVED_DIR}/{file}");
    sandbox
        .write_bytes(path.clone(), bytes)
        .await
        .map(|_| path)
        .map_err(|e| e.message)
}

/// The head and the tail of a long text around a line naming where the whole is.
fn capped(text: &str, saved: Option<&str>) -> String {
    let mut head = PREVIEW.min(text.len());
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len().saturating_sub(PREVIEW);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let whole = match saved {
        Some(path) => format!("the whole result is in {path}; search it with grep"),
        None => "the whole result could not be saved".to_owned(),
    };
    format!(
        "{}\n[… {} bytes cut; {whole} …]\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_result_keeps_its_head_and_tail_on_char_boundaries() {
        let text = format!("{}{}", "é".repeat(OUTPUT_CAP), "end");
        let c = capped(&text, Some(".decima/mcp/x.txt"));
        assert!(c.len() < 3 * PREVIEW);
        assert!(c.ends_with("end"));
        assert!(c.contains(".decima/mcp/x.txt"));
    }
}
