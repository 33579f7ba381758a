//! A running MCP server: the handshake (with the server's own timeout, which the SDK does not
//! give), its tools, calls bounded by a timeout and a cancellation token (a dropped call sends
//! `notifications/cancelled`), and a shutdown that closes the connection and then kills what
//! is left of a host process.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest, CustomResult,
    Implementation, ListToolsRequest, PaginatedRequestParams, ServerResult,
};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument as _, debug, info_span, warn};

use crate::config::{Place, ServerConfig, Transport};
use crate::content::{McpOutput, read_result};
use crate::error::{McpError, Result};
use crate::host_process::{self, ServerProcess, StderrTail};

/// How long closing the connection may take before the process is killed anyway.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// A tool as the server describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// The server's own name for it.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// Its input schema, as the server gave it.
    pub input_schema: Value,
    /// The server says it changes nothing (`readOnlyHint`). It informs the approval prompt;
    /// it never skips it.
    pub read_only: Option<bool>,
    /// The server says it may destroy data (`destructiveHint`).
    pub destructive: Option<bool>,
}

/// Where a host server runs and where its stderr goes.
#[derive(Debug, Clone)]
pub struct HostContext {
    /// The working directory when the configuration sets none: the run's workspace.
    pub workspace: PathBuf,
    /// The server's stderr log file; `None` keeps only the last lines in memory.
    pub log: Option<PathBuf>,
}

/// A connected server.
pub struct McpClient {
    name: String,
    call_timeout: Duration,
    peer: Peer<RoleClient>,
    /// Taken by the shutdown, which may come from any holder of a shared client.
    service: std::sync::Mutex<Option<RunningService<RoleClient, ClientConfig>>>,
    process: std::sync::Mutex<Option<Box<dyn ServerProcess>>>,
    stderr: StderrTail,
    tools: Vec<McpTool>,
    /// How long the start took, handshake and tool list included.
    pub started_in: Duration,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("name", &self.name)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("decima", env!("CARGO_PKG_VERSION")),
    )
}

impl McpClient {
    /// Starts a stdio server on the host or reaches an HTTP one, and lists its tools, within
    /// the server's startup timeout. A server placed in Docker is started by the caller, which
    /// owns the sandbox, through [`McpClient::attach`]. `bearer_token` is the HTTP
    /// server's token (without `Bearer `), read by the caller from where it is kept.
    pub async fn connect(
        config: &ServerConfig,
        host: &HostContext,
        bearer_token: Option<&str>,
    ) -> Result<Self> {
        config.validate()?;
        let span = info_span!("mcp.start", server = %config.name);
        let started = Instant::now();
        match &config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
                place,
            } => {
                if *place == Place::Docker {
                    return Err(McpError::Config(format!(
                        "MCP server {:?} runs in the Docker sandbox; it is started through the \
                         sandbox, not on the host",
                        config.name
                    )));
                }
                let dir = match cwd {
                    Some(c) => host.workspace.join(c),
                    None => host.workspace.clone(),
                };
                let (process, stdout, stdin, stderr) =
                    host_process::spawn(&config.name, command, args, env, &dir, host.log.clone())?;
                Self::handshake(
                    config,
                    (stdout, stdin),
                    Some(Box::new(process)),
                    stderr,
                    started,
                )
                .instrument(span)
                .await
            }
            Transport::Http { url, headers, .. } => {
                let mut transport_config =
                    StreamableHttpClientTransportConfig::with_uri(url.as_str());
                transport_config.auth_header = bearer_token.map(str::to_owned);
                for (k, v) in headers {
                    if let (Ok(name), Ok(value)) = (
                        reqwest::header::HeaderName::from_bytes(k.as_bytes()),
                        reqwest::header::HeaderValue::from_str(v),
                    ) {
                        transport_config.custom_headers.insert(name, value);
                    }
                }
                let client = reqwest::Client::builder()
                    .connect_timeout(config.startup_timeout())
                    .build()
                    .map_err(|e| McpError::Start {
                        server: config.name.clone(),
                        message: format!("no HTTP client could be made: {e}"),
                    })?;
                let transport =
                    StreamableHttpClientTransport::with_client(client, transport_config);
                Self::handshake(config, transport, None, StderrTail::default(), started)
                    .instrument(span)
                    .await
            }
        }
    }

    /// Speaks to a server over streams the caller opened (a sandbox exec's stdout and stdin,
    /// an in-process server), within the server's startup timeout. `process`, when given, is
    /// stopped after the connection closes; `stderr` explains failures.
    pub async fn attach<R, W>(
        config: &ServerConfig,
        read: R,
        write: W,
        stderr: StderrTail,
        process: Option<Box<dyn ServerProcess>>,
    ) -> Result<Self>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let span = info_span!("mcp.start", server = %config.name);
        Self::handshake(config, (read, write), process, stderr, Instant::now())
            .instrument(span)
            .await
    }

    async fn handshake<T, E, A>(
        config: &ServerConfig,
        transport: T,
        mut process: Option<Box<dyn ServerProcess>>,
        stderr: StderrTail,
        started: Instant,
    ) -> Result<Self>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let timeout = config.startup_timeout();
        let connected = tokio::time::timeout(timeout, async {
            let service = client_info()
                .serve(transport)
                .await
                .map_err(|e| format!("the handshake failed ({e})"))?;
            let listed = list_tools(service.peer()).await;
            Ok::<_, String>((service, listed))
        })
        .await;
        // A start that failed: a server that exited may still have its last stderr lines on
        // their way, and the error should name them.
        if !matches!(&connected, Ok(Ok((_, Ok(_))))) {
            stderr.settle(Duration::from_millis(500)).await;
        }
        let failed = |message: String, process: &mut Option<Box<dyn ServerProcess>>| {
            let exited = process.as_mut().is_some_and(|p| p.exited());
            McpError::Handshake {
                server: config.name.clone(),
                message: format!(
                    "{message}{}{}{}",
                    if exited { "; the process exited" } else { "" },
                    stderr.explain(),
                    legacy_sse_hint(config)
                ),
            }
        };
        let (service, listed) = match connected {
            Err(_) => {
                let e = failed(
                    format!(
                        "it did not finish the MCP handshake within {} s (is it an MCP server \
                         speaking on stdout? raise --startup-timeout if it is slow to load)",
                        timeout.as_secs()
                    ),
                    &mut process,
                );
                if let Some(p) = process {
                    p.stop().await;
                }
                return Err(e);
            }
            Ok(Err(message)) => {
                let e = failed(message, &mut process);
                if let Some(p) = process {
                    p.stop().await;
                }
                return Err(e);
            }
            Ok(Ok(pair)) => pair,
        };
        let mut client = Self {
            name: config.name.clone(),
            call_timeout: config.call_timeout(),
            peer: service.peer().clone(),
            service: std::sync::Mutex::new(Some(service)),
            process: std::sync::Mutex::new(process),
            stderr: stderr.clone(),
            tools: Vec::new(),
            started_in: started.elapsed(),
        };
        match listed {
            Ok(tools) => {
                client.tools = tools;
                debug!(
                    tools = client.tools.len(),
                    ms = client.started_in.as_millis() as u64,
                    "MCP server ready"
                );
                Ok(client)
            }
            Err(message) => {
                let mut process = client.process.lock().ok().and_then(|mut p| p.take());
                let e = failed(message, &mut process);
                if let Some(p) = process {
                    p.stop().await;
                }
                client.shutdown().await;
                Err(e)
            }
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its tools, as listed at the start.
    pub fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// The last lines the server wrote to stderr (host servers).
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr.lines()
    }

    /// Calls a tool with a JSON object of arguments. Cancelling `cancel`, or the call timeout,
    /// abandons the call, which tells the server (`notifications/cancelled`).
    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<McpOutput> {
        if self.peer.is_transport_closed() {
            return Err(self.protocol(format!(
                "the connection is closed, so {tool} was not called{}",
                self.stderr.explain()
            )));
        }
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let call = self.peer.call_tool(params);
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(McpError::Cancelled {
                server: self.name.clone(),
                tool: tool.to_owned(),
            }),
            r = tokio::time::timeout(self.call_timeout, call) => r,
        };
        match outcome {
            Err(_) => Err(McpError::CallTimeout {
                server: self.name.clone(),
                tool: tool.to_owned(),
                seconds: self.call_timeout.as_secs(),
            }),
            Ok(Err(rmcp::ServiceError::McpError(e))) => {
                // A JSON-RPC error (unknown tool, invalid params): the model reads it.
                Ok(McpOutput {
                    text: format!("MCP error {}: {}", e.code.0, e.message),
                    images: Vec::new(),
                    is_error: true,
                })
            }
            Ok(Err(rmcp::ServiceError::TransportClosed)) => Err(self.protocol(format!(
                "the connection closed during the call to {tool} (did the server exit?){}",
                self.stderr.explain()
            ))),
            Ok(Err(e)) => Err(self.protocol(format!("the call to {tool} failed: {e}"))),
            Ok(Ok(result)) => {
                let json = serde_json::to_value(&result)
                    .map_err(|e| self.protocol(format!("its result could not be read: {e}")))?;
                Ok(read_result(&json))
            }
        }
    }

    fn protocol(&self, message: String) -> McpError {
        McpError::Protocol {
            server: self.name.clone(),
            message,
        }
    }

    /// Closes the connection (for a host server, its stdin), then kills what is left of its
    /// process group. Later calls fail at once; a second shutdown does nothing.
    pub async fn shutdown(&self) {
        let service = self.service.lock().ok().and_then(|mut s| s.take());
        if let Some(mut service) = service
            && service.close_with_timeout(CLOSE_TIMEOUT).await.is_err()
        {
            warn!(server = %self.name, "closing an MCP connection failed");
        }
        let process = self.process.lock().ok().and_then(|mut p| p.take());
        if let Some(process) = process {
            process.stop().await;
        }
    }
}

/// A hint for an HTTP server whose URL names the older HTTP+SSE transport's endpoint (`/sse`),
/// which servers still offer beside streamable HTTP and which Decima does not speak.
fn legacy_sse_hint(config: &ServerConfig) -> &'static str {
    match &config.transport {
        Transport::Http { url, .. }
            if url
                .split(['?', '#'])
                .next()
                .is_some_and(|path| path.trim_end_matches('/').ends_with("/sse")) =>
        {
            "; this URL looks like the older HTTP+SSE transport's endpoint, which Decima does \
             not speak: give the server's streamable-HTTP endpoint (often ending in /mcp), or \
             run it over stdio"
        }
        _ => "",
    }
}

/// The most pages of tools read from one server: a server whose cursor never ends is cut off
/// here rather than listed forever.
const MAX_TOOL_PAGES: usize = 100;

/// Every page of the server's tools, read leniently: the SDK's typed list refuses the whole
/// answer when one tool breaks its schema (no `inputSchema`, a boolean one), which would drop
/// every tool of the server for one bad entry. A tool without a usable name is skipped with a
/// warning; one without an object schema is offered with an empty object.
async fn list_tools(peer: &Peer<RoleClient>) -> std::result::Result<Vec<McpTool>, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_TOOL_PAGES {
        let request = ClientRequest::ListToolsRequest(ListToolsRequest {
            method: Default::default(),
            params: Some(PaginatedRequestParams::default().with_cursor(cursor.take())),
            extensions: Default::default(),
        });
        let page = match peer.send_request(request).await {
            Ok(ServerResult::ListToolsResult(page)) => serde_json::to_value(&page)
                .map_err(|e| format!("its tool list could not be read ({e})"))?,
            // What the typed list refused arrives whole, to be read tool by tool.
            Ok(ServerResult::CustomResult(CustomResult(page))) => page,
            Ok(_) => return Err("it answered tools/list with something else".into()),
            Err(e) => return Err(format!("it did not list its tools ({e})")),
        };
        let listed = page.get("tools").and_then(Value::as_array);
        let Some(listed) = listed else {
            return Err("its answer to tools/list holds no \"tools\" array".into());
        };
        for t in listed {
            match tool_of(t) {
                Some(tool) => tools.push(tool),
                None => warn!("an MCP tool without a name was skipped"),
            }
        }
        cursor = page
            .get("nextCursor")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .map(str::to_owned);
        if cursor.is_none() {
            return Ok(tools);
        }
    }
    warn!(
        pages = MAX_TOOL_PAGES,
        "an MCP server's tool list did not end; the tools read so far are offered"
    );
    Ok(tools)
}

/// A listed tool read from its JSON form.
fn tool_of(t: &Value) -> Option<McpTool> {
    let annotations = t.get("annotations");
    let hint = |k: &str| annotations.and_then(|a| a.get(k)).and_then(Value::as_bool);
    Some(McpTool {
        name: t
            .get("name")?
            .as_str()
            .filter(|n| !n.is_empty())?
            .to_owned(),
        description: t
            .get("description")
            .and_then(Value::as_str)
            .or_else(|| t.get("title").and_then(Value::as_str))
            .unwrap_or("")
            .to_owned(),
        input_schema: match t.get("inputSchema") {
            Some(schema @ Value::Object(_)) => schema.clone(),
            _ => serde_json::json!({"type": "object"}),
        },
        read_only: hint("readOnlyHint"),
        destructive: hint("destructiveHint"),
    })
}

/// The path of a server's stderr log under `dir`.
pub fn log_path(dir: &Path, server: &str) -> PathBuf {
    dir.join(format!("{server}.stderr.log"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sse_endpoint_gets_a_hint_and_others_none() {
        let hint = |url: &str| legacy_sse_hint(&ServerConfig::http("t", url));
        assert!(hint("http://127.0.0.1:3001/sse").contains("streamable-HTTP endpoint"));
        assert!(hint("https://x.example/sse/?key=1").contains("/mcp"));
        assert_eq!(hint("https://x.example/mcp"), "");
        assert_eq!(hint("https://x.example/sseverything"), "");
    }
}
