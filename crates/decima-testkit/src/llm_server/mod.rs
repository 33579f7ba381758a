//! A wire-level LLM test server: real HTTP/1.1 on 127.0.0.1 speaking the OpenAI chat-completions,
//! Anthropic Messages and Ollama native chat (`/api/chat`) streaming protocols from scripts, with
//! fault injection, recording every request it receives.
//!
//! It is the project's only test double, so it writes raw bytes on the socket: chunked framing,
//! SSE line endings and JSON key order are exactly what a test scripts, and clients meet the same
//! splits, stalls and cuts they meet on the internet.
//!
//! ```no_run
//! # async fn demo() {
//! use decima_testkit::{LlmServer, Reply, Turn};
//! let server = LlmServer::start().await;
//! server.enqueue(Reply::Stream(Turn { text: vec!["Hello".into()], ..Turn::default() }));
//! // point the client at server.openai_base_url() or server.anthropic_base_url() ...
//! let requests = server.requests();
//! # }
//! ```

mod anthropic;
pub mod discovery;
mod error;
pub mod gemini;
mod http;
mod ollama;
mod openai;
mod profiles;
mod prompt_cache;
mod script;
mod sse;
mod writer;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

pub use error::LlmServerError;
pub use profiles::{OpenAiQuirks, Profile};
pub use prompt_cache::{CacheUsage, MIN_CACHED_TOKENS, PromptCacheModel};
pub use script::{
    AnthropicQuirks, ErrorReply, InputInStart, ReasoningField, Reply, ScriptedToolCall,
    StreamFault, StreamOptions, ThinkingBlock, Turn,
};

use http::{Conn, Request};
use script::ErrorKind;
use sse::{Plan, SseEvent};
use writer::{Outcome, json_response, status_response, write_plain, write_stream};

/// A running test server; dropping it stops the server and closes its connections.
pub struct LlmServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

/// One request the server received, kept so tests can check what the client sent.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// The HTTP method, e.g. "POST".
    pub method: String,
    /// The request target, e.g. "/v1/chat/completions".
    pub path: String,
    /// Headers in arrival order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
    /// The body parsed, if it is JSON.
    pub json: Option<serde_json::Value>,
    /// When the whole request had been read.
    pub received_at: Instant,
    /// When the server noticed the client closed the connection while a reply was still being
    /// streamed or stalled (read returned EOF / reset, or a write failed). None if it never did.
    pub disconnected_at: Option<Instant>,
}

impl RecordedRequest {
    /// The first value of a header, the name matched case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Binds a port, then closes it: connecting to the returned base URL is refused, for tests of
/// "provider unreachable".
///
/// # Panics
/// If no loopback port can be bound at all (the test cannot run then).
pub fn refused_base_url() -> String {
    match std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
        Ok(addr) => format!("http://127.0.0.1:{}", addr.port()),
        Err(e) => panic!("refused_base_url: cannot bind a loopback port: {e}"),
    }
}

/// A fallback that builds a reply from the request when no scripted reply is queued.
type Responder = dyn Fn(&RecordedRequest) -> Reply + Send + Sync;

/// A server's own check of each request, answered before any scripted reply.
type Check = dyn Fn(&RecordedRequest) -> Option<Reply> + Send + Sync;

/// State shared between the handle and the server tasks.
struct Shared {
    queue: Mutex<VecDeque<Reply>>,
    /// Asked when the queue is empty; an `Arc` so it is called without holding the lock.
    responder: Mutex<Option<Arc<Responder>>>,
    /// Checks every request first; a refusal is sent instead of the next reply, which stays queued.
    check: Mutex<Option<Arc<Check>>>,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Bumped whenever a request is recorded or a disconnect noted, to wake waiters.
    changes: watch::Sender<u64>,
    /// Numbers requests from 1, for ids in responses.
    seq: AtomicU64,
    /// When set, streamed replies report the usage this model of the providers' prompt caches
    /// gives the request, instead of the script's.
    prompt_cache: Mutex<Option<prompt_cache::PromptCacheModel>>,
    /// Fixed answers per method and path (servers' discovery endpoints), before the queue.
    discovery: discovery::Routes,
}

/// Locks a mutex, taking the data even if a panicking test thread poisoned it.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    fn record(&self, request: RecordedRequest) -> usize {
        let index = {
            let mut requests = lock(&self.requests);
            requests.push(request);
            requests.len() - 1
        };
        self.changes.send_modify(|g| *g += 1);
        index
    }

    fn mark_disconnected(&self, index: usize) {
        if let Some(r) = lock(&self.requests).get_mut(index) {
            r.disconnected_at.get_or_insert_with(Instant::now);
        }
        self.changes.send_modify(|g| *g += 1);
    }
}

impl LlmServer {
    /// Binds 127.0.0.1:0 and serves in a background tokio task (the caller is inside a tokio
    /// runtime).
    ///
    /// # Panics
    /// If no loopback port can be bound; use [`LlmServer::try_start`] to get the error instead.
    pub async fn start() -> LlmServer {
        match LlmServer::try_start().await {
            Ok(server) => server,
            Err(e) => panic!("LlmServer::start: {e}"),
        }
    }

    /// Like [`LlmServer::start`], returning the bind error instead of panicking.
    pub async fn try_start() -> Result<LlmServer, LlmServerError> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(LlmServerError::Bind)?;
        let addr = listener.local_addr().map_err(LlmServerError::Bind)?;
        let (changes, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            responder: Mutex::new(None),
            check: Mutex::new(None),
            requests: Mutex::new(Vec::new()),
            changes,
            seq: AtomicU64::new(0),
            prompt_cache: Mutex::new(None),
            discovery: Default::default(),
        });
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        Ok(LlmServer { addr, shared, task })
    }

    /// "http://127.0.0.1:PORT/v1" — OpenAI clients POST {this}/chat/completions.
    pub fn openai_base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.addr.port())
    }

    /// "http://127.0.0.1:PORT" — Anthropic clients POST {this}/v1/messages.
    pub fn anthropic_base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.addr.port())
    }

    /// The bound address, for tests that speak raw TCP.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queues a reply; each request pops the next one (FIFO). With none queued the server asks the
    /// [`LlmServer::respond_with`] responder, or without one answers 500 with a JSON error body
    /// saying "no scripted reply" (so a test notices).
    pub fn enqueue(&self, reply: Reply) {
        lock(&self.shared.queue).push_back(reply);
    }

    /// Sets a fallback responder: when no queued reply is left, the server calls `f` with the
    /// request it just recorded (body and parsed JSON included) and sends the reply `f` returns,
    /// so a test can answer deterministically from the conversation a client sends (e.g. across
    /// client processes killed mid-request). Queued replies still go first. Replaces any earlier
    /// responder. `f` runs on a server task and must not block; if it panics, that request is
    /// answered 500 saying so.
    pub fn respond_with(&self, f: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static) {
        *lock(&self.shared.responder) = Some(Arc::new(f));
    }

    /// Makes the server check each request as a real one would (e.g.
    /// [`gemini::refuses_unsigned_calls`]): when `f` answers with a reply, that refusal is sent
    /// and the queued replies wait for the next request.
    pub fn refuse_with(
        &self,
        f: impl Fn(&RecordedRequest) -> Option<Reply> + Send + Sync + 'static,
    ) {
        *lock(&self.shared.check) = Some(Arc::new(f));
    }

    /// Makes streamed replies report usage as the providers' prompt caches would: every token of
    /// the request as its input, and of them what the cache read and wrote (see the
    /// `prompt_cache` module for the model). A script's output tokens are kept.
    pub fn model_prompt_caches(&self) {
        lock(&self.shared.prompt_cache).get_or_insert_with(Default::default);
    }

    /// How many queued replies no request has taken yet, to check a test used its whole script.
    pub fn pending_replies(&self) -> usize {
        lock(&self.shared.queue).len()
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Waits until `n` requests have arrived or the timeout passes; returns the requests.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        self.wait_until(timeout, |requests| requests.len() >= n)
            .await;
        self.requests()
    }

    /// Waits until the client of request `index` (0-based) is seen gone, or the timeout passes;
    /// returns its `disconnected_at`.
    pub async fn wait_for_disconnect(&self, index: usize, timeout: Duration) -> Option<Instant> {
        self.wait_until(timeout, |requests| {
            requests
                .get(index)
                .is_some_and(|r| r.disconnected_at.is_some())
        })
        .await;
        lock(&self.shared.requests)
            .get(index)
            .and_then(|r| r.disconnected_at)
    }

    async fn wait_until(&self, timeout: Duration, done: impl Fn(&[RecordedRequest]) -> bool) {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut rx = self.shared.changes.subscribe();
        loop {
            rx.borrow_and_update();
            if done(&lock(&self.shared.requests)) {
                return;
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return,
            }
        }
    }
}

impl std::fmt::Debug for LlmServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        // Aborting the accept task drops its JoinSet, which aborts every connection task.
        self.task.abort();
    }
}

/// The wire protocol a request path asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    OpenAi,
    Anthropic,
}

impl Protocol {
    /// From the request target, query string ignored.
    fn for_path(path: &str) -> Option<Protocol> {
        let path = path.split('?').next().unwrap_or(path);
        if path.ends_with("/chat/completions") {
            Some(Protocol::OpenAi)
        } else if path.ends_with("/v1/messages") {
            Some(Protocol::Anthropic)
        } else {
            None
        }
    }

    pub(crate) fn malformed_event(self) -> SseEvent {
        match self {
            Protocol::OpenAi => openai::malformed_event(),
            Protocol::Anthropic => anthropic::malformed_event(),
        }
    }

    pub(crate) fn error_event(self) -> SseEvent {
        match self {
            Protocol::OpenAi => openai::error_event(),
            Protocol::Anthropic => anthropic::error_event(),
        }
    }
}

/// What rendering a reply needs to know about the request.
pub(crate) struct RenderCtx {
    /// The request's number, from 1.
    pub(crate) seq: u64,
    /// Unix seconds, for OpenAI's `created`.
    pub(crate) created: u64,
    /// The request asked for `stream_options.include_usage`.
    pub(crate) include_usage: bool,
}

/// A JSON string literal.
pub(crate) fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve_connection(stream, Arc::clone(&shared)));
                }
                // Out of descriptors or similar: back off instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    let mut conn = Conn::new(stream);
    loop {
        let request = match conn.read_request().await {
            Ok(Some(request)) => request,
            Ok(None) | Err(LlmServerError::Truncated) | Err(LlmServerError::Io(_)) => return,
            Err(e) => {
                let body =
                    openai::error_body(&e.to_string(), "invalid_request_error", "null", "null");
                let _ = conn
                    .write_plain(&json_response(400, &body, &[], true, None))
                    .await;
                conn.close().await;
                return;
            }
        };
        if !handle(&mut conn, &shared, request).await {
            conn.close().await;
            return;
        }
    }
}

/// Answers one request; returns whether the connection can take another.
async fn handle(conn: &mut Conn, shared: &Shared, request: Request) -> bool {
    let seq = shared.seq.fetch_add(1, Ordering::Relaxed) + 1;
    let protocol = Protocol::for_path(&request.path);
    let json: Option<serde_json::Value> = serde_json::from_slice(&request.body).ok();
    let model = json
        .as_ref()
        .and_then(|j| j.get("model"))
        .and_then(|m| m.as_str())
        .unwrap_or("test-model")
        .to_owned();
    let include_usage = json
        .as_ref()
        .and_then(|j| j.pointer("/stream_options/include_usage"))
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let close = request.wants_close;
    let cache_usage = match (protocol, &json, lock(&shared.prompt_cache).as_mut()) {
        (Some(protocol), Some(json), Some(model)) => Some(model.serve(protocol, json)),
        _ => None,
    };
    // The real API refuses tools it cannot take before anything else, and the scripted turn
    // stays for the next request.
    let refused = match (protocol, &json) {
        (Some(Protocol::Anthropic), Some(json)) => anthropic::refused_tools(json),
        _ => None,
    };
    let description = format!("{} {}", request.method, request.path);
    let routed = discovery::routed(shared, &request.method, &request.path);
    let native_ollama = ollama::serves(&request.path);
    let index = shared.record(RecordedRequest {
        method: request.method,
        path: request.path,
        headers: request.headers,
        body: request.body,
        json,
        received_at: Instant::now(),
        disconnected_at: None,
    });
    if let Some(reply) = routed {
        return discovery::answer(conn, reply, close).await;
    }
    let reply = match refused {
        Some(message) => Ok(Reply::Error(ErrorReply {
            kind: ErrorKind::BadRequest(message),
        })),
        None => next_reply(shared, index, &description),
    };
    let request_id = (
        match protocol {
            Some(Protocol::Anthropic) => "request-id",
            _ => "x-request-id",
        }
        .to_owned(),
        format!("req_{seq:032x}"),
    );
    let outcome = match reply {
        reply if native_ollama => ollama::answer(conn, reply, &model, close, &request_id).await,
        Err(message) => {
            let body = match protocol {
                Some(Protocol::Anthropic) => anthropic::error_body("api_error", &message),
                _ => openai::error_body(&message, "server_error", "null", r#""no_scripted_reply""#),
            };
            write_plain(
                conn,
                json_response(500, &body, &[], close, Some(&request_id)),
            )
            .await
        }
        Ok(Reply::Status {
            status,
            headers,
            body,
        }) => {
            write_plain(
                conn,
                status_response(status, &headers, &body, close, &request_id),
            )
            .await
        }
        Ok(Reply::Error(ErrorReply { kind })) => {
            let (status, body) = match protocol {
                Some(Protocol::Anthropic) => anthropic::error_reply(&kind, &model),
                _ => openai::error_reply(&kind, &model),
            };
            let extra = match &kind {
                ErrorKind::RateLimited { retry_after } => {
                    vec![("retry-after".to_owned(), retry_after.clone())]
                }
                _ => Vec::new(),
            };
            write_plain(
                conn,
                json_response(status, &body, &extra, close, Some(&request_id)),
            )
            .await
        }
        Ok(Reply::RawSse { chunks }) => {
            let content_type = match protocol {
                Some(Protocol::Anthropic) => "text/event-stream",
                _ => "text/event-stream; charset=utf-8",
            };
            write_stream(conn, content_type, close, &request_id, Plan::raw(chunks)).await
        }
        Ok(Reply::Stream(mut turn)) => {
            if let Some(usage) = cache_usage {
                let output = turn.usage.map_or(1, |(_, output)| output);
                turn.usage = Some((usage.prompt, output));
                turn.cached = Some((usage.read, usage.written));
            }
            let ctx = RenderCtx {
                seq,
                created: SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0),
                include_usage,
            };
            match protocol {
                Some(Protocol::OpenAi) if turn.openai.json_body => {
                    let body = openai::completion_body(&turn, &ctx);
                    write_plain(
                        conn,
                        json_response(200, &body, &[], close, Some(&request_id)),
                    )
                    .await
                }
                Some(p @ Protocol::OpenAi) => {
                    let events = openai::render(&turn, &ctx);
                    let plan = Plan::stream(p, events, &turn.options, turn.fault.as_ref());
                    write_stream(
                        conn,
                        "text/event-stream; charset=utf-8",
                        close,
                        &request_id,
                        plan,
                    )
                    .await
                }
                Some(p @ Protocol::Anthropic) => {
                    let events = anthropic::render(&turn, &ctx);
                    let plan = Plan::stream(p, events, &turn.options, turn.fault.as_ref());
                    write_stream(conn, "text/event-stream", close, &request_id, plan).await
                }
                None => {
                    let body = openai::error_body(
                        &format!(
                            "the test LLM server streams only on /api/chat and paths ending in /chat/completions or /v1/messages, not {description}"
                        ),
                        "invalid_request_error",
                        "null",
                        r#""unknown_url""#,
                    );
                    write_plain(
                        conn,
                        json_response(404, &body, &[], close, Some(&request_id)),
                    )
                    .await
                }
            }
        }
    };
    match outcome {
        Outcome::Complete => !close,
        Outcome::Closed => false,
        Outcome::ClientGone => {
            shared.mark_disconnected(index);
            false
        }
    }
}

/// The reply for request `index`: the next queued one, else the responder's, else the message
/// of the 500 the server answers instead.
fn next_reply(shared: &Shared, index: usize, description: &str) -> Result<Reply, String> {
    let check = lock(&shared.check).clone();
    if let Some(check) = check {
        let request = lock(&shared.requests).get(index).cloned();
        if let Some(refusal) = request.and_then(|r| check(&r)) {
            return Ok(refusal);
        }
    }
    if let Some(reply) = lock(&shared.queue).pop_front() {
        return Ok(reply);
    }
    // Cloned out so neither lock is held while the responder runs (it may enqueue, say).
    let responder = lock(&shared.responder).clone();
    let request = lock(&shared.requests).get(index).cloned();
    let (Some(responder), Some(request)) = (responder, request) else {
        return Err(format!(
            "no scripted reply: the test LLM server had nothing queued for {description}"
        ));
    };
    std::panic::catch_unwind(AssertUnwindSafe(|| responder(&request))).map_err(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a non-string panic".to_owned());
        format!("the test LLM server's responder panicked for {description}: {what}")
    })
}
