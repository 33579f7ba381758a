//! Sending a request and turning the SSE response into [`StreamEvent`]s, with the idle and total
//! timeouts applied to every read.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{StreamExt, stream};
use tokio::time::Instant;
use tracing::Instrument as _;

pub use crate::http_text::parse_retry_after;
#[cfg(test)]
use crate::http_text::redact_key;
pub(crate) use crate::http_text::{error_chain, error_message, redact};
use crate::provider::{EventStream, ProviderConfig};
use crate::{
    FinishReason, LlmError, Protocol, StreamEvent, Usage, anthropic, error, ndjson, ollama, openai,
};

/// Most of an error body we read: enough for any provider's message.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Most of a whole (non-streamed) JSON answer we read; a chat completion is far smaller.
const MAX_WHOLE_BODY: usize = 32 * 1024 * 1024;

/// An HTTP request ready to send.
pub(crate) struct Request {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: serde_json::Value,
}

/// Protocol-specific decoding of SSE events (and of NDJSON lines, carried as events' data).
pub(crate) enum Decoder {
    OpenAi(openai::Decoder),
    Anthropic(anthropic::Decoder),
    Ollama(ollama::Decoder),
}

/// What decoding one SSE event produced.
pub(crate) struct Decoded {
    pub events: Vec<StreamEvent>,
    pub done: bool,
}

impl Decoder {
    fn decode(&mut self, provider: &str, event: &Event) -> Result<Decoded, LlmError> {
        // Keep-alive events without data carry nothing for either protocol.
        if event.data.trim().is_empty() {
            return Ok(Decoded {
                events: Vec::new(),
                done: false,
            });
        }
        match self {
            Decoder::OpenAi(d) => d.decode(provider, event),
            Decoder::Anthropic(d) => d.decode(provider, event),
            Decoder::Ollama(d) => d.decode(provider, &event.data),
        }
    }

    fn finish(&mut self, provider: &str) -> Result<Vec<StreamEvent>, LlmError> {
        match self {
            Decoder::OpenAi(d) => d.finish(provider),
            Decoder::Anthropic(d) => d.finish(provider),
            Decoder::Ollama(d) => d.finish(provider),
        }
    }

    /// A whole JSON body answering a streaming request.
    fn decode_body(&mut self, provider: &str, body: &[u8]) -> Result<Vec<StreamEvent>, LlmError> {
        match self {
            Decoder::OpenAi(d) => d.decode_body(provider, body),
            Decoder::Anthropic(_) => Err(anthropic_whole_body(provider, body)),
            Decoder::Ollama(d) => d.decode_body(provider, body),
        }
    }
}

/// An Anthropic-protocol 200 with a whole JSON body: the error it carries, classified, or else a
/// protocol error (this client reads Anthropic answers as streams only).
fn anthropic_whole_body(provider: &str, body: &[u8]) -> LlmError {
    let json = serde_json::from_slice::<serde_json::Value>(body).ok();
    match json.as_ref().and_then(|j| j.get("error")) {
        Some(error) => error::stream_error(provider, Some(error), "api_error"),
        None => LlmError::Protocol {
            provider: provider.to_string(),
            detail: "answered a streaming request with a whole JSON body".into(),
        },
    }
}

/// When bytes last arrived, written by the byte stream as it is read. Any bytes prove the
/// connection alive, SSE comments included (OpenRouter's `: OPENROUTER PROCESSING`, DeepSeek's
/// `: keep-alive`), and the SSE parser drops comments before the decoder could see them, so the
/// idle timer watches the bytes, not the events.
#[derive(Clone)]
struct Activity {
    origin: Instant,
    last_ms: Arc<AtomicU64>,
}

impl Activity {
    fn new() -> Self {
        Self {
            origin: Instant::now(),
            last_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    fn touch(&self) {
        self.last_ms
            .store(millis(self.origin.elapsed()), Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.origin + Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }
}

/// What a successful response holds.
enum Answer {
    /// An event stream.
    Stream(SseStream),
    /// A whole JSON body: a server that ignores `"stream": true`, or a 200 carrying an error.
    Whole(Vec<u8>),
}

type SseStream = std::pin::Pin<
    Box<dyn futures_util::Stream<Item = Result<Event, EventStreamError<reqwest::Error>>> + Send>,
>;

enum State {
    NotSent(reqwest::Client, Request),
    Streaming(SseStream),
    Done,
}

struct Machine {
    config: Arc<ProviderConfig>,
    decoder: Decoder,
    pending: VecDeque<StreamEvent>,
    state: State,
    deadline: Option<Instant>,
    report: Report,
    activity: Activity,
}

/// What one request did, for its log lines: statuses, timings, counts and usage, never text,
/// headers or the key. Logged once, when the request ends, fails or is dropped half-way.
struct Report {
    span: tracing::Span,
    started: Instant,
    status: Option<u16>,
    first_event: Option<Duration>,
    events: usize,
    usage: Option<Usage>,
    finish: Option<&'static str>,
    ended: bool,
}

impl Report {
    fn new(span: tracing::Span) -> Self {
        Self {
            span,
            started: Instant::now(),
            status: None,
            first_event: None,
            events: 0,
            usage: None,
            finish: None,
            ended: false,
        }
    }

    fn saw(&mut self, event: &StreamEvent) {
        self.events += 1;
        if self.first_event.is_none() {
            self.first_event = Some(self.started.elapsed());
        }
        match event {
            StreamEvent::Usage(usage) => self.usage = Some(*usage),
            StreamEvent::Finish(reason) => self.finish = Some(finish_name(reason)),
            _ => {}
        }
    }

    fn finished(&mut self) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        tracing::info!(
            status = self.status,
            duration_ms = millis(self.started.elapsed()),
            first_event_ms = self.first_event.map(millis),
            events = self.events,
            prompt_tokens = self.usage.map(|u| u.prompt_tokens),
            completion_tokens = self.usage.map(|u| u.completion_tokens),
            finish = self.finish.map(tracing::field::display),
            "request finished"
        );
    }

    fn failed(&mut self, error: &LlmError) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        // The class, kind and status only: the error's message can quote the provider's text,
        // which may echo the prompt.
        tracing::warn!(
            class = %error.class(),
            kind = %error.kind(),
            status = error.status().or(self.status),
            duration_ms = millis(self.started.elapsed()),
            events = self.events,
            "request failed"
        );
    }
}

impl Drop for Report {
    fn drop(&mut self) {
        if !self.ended && self.status.is_some() {
            let _entered = self.span.enter();
            tracing::info!(
                duration_ms = millis(self.started.elapsed()),
                events = self.events,
                "request dropped before its end"
            );
        }
    }
}

/// Log-friendly name of a finish reason; a provider's own reason is not copied verbatim.
fn finish_name(reason: &FinishReason) -> &'static str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::Length => "length",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Repetition => "repetition",
        FinishReason::Stopped => "stopped",
        FinishReason::Other(_) => "other",
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Decodes a recorded response body exactly as a live one is decoded (same SSE or NDJSON
/// framing, decoder and timeouts), for replaying captured streams and for measuring the decoder
/// on its own.
pub fn replay(config: ProviderConfig, chunks: Vec<bytes::Bytes>) -> EventStream {
    let decoder = match config.protocol {
        Protocol::OpenAi => Decoder::OpenAi(openai::Decoder::default()),
        Protocol::Anthropic => Decoder::Anthropic(anthropic::Decoder::default()),
        Protocol::Ollama => Decoder::Ollama(ollama::Decoder::default()),
    };
    let body = stream::iter(chunks.into_iter().map(Ok::<_, reqwest::Error>));
    let activity = Activity::new();
    let events = body_events(config.protocol, body, &activity);
    let machine = Machine {
        deadline: Some(Instant::now() + config.timeouts.total),
        config: Arc::new(config),
        decoder,
        pending: VecDeque::new(),
        state: State::Streaming(events),
        report: Report::new(tracing::Span::none()),
        activity,
    };
    run(machine)
}

/// A body's events as `protocol` frames them, noting every read in `activity`: SSE, where a
/// final event without its terminating blank line is still an event (so a blank line is appended
/// after a clean end), or Ollama's NDJSON lines.
fn body_events<S>(protocol: Protocol, body: S, activity: &Activity) -> SseStream
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, reqwest::Error>> + Send + 'static,
{
    let activity = activity.clone();
    let body = body.inspect(move |chunk| {
        if chunk.is_ok() {
            activity.touch();
        }
    });
    match protocol {
        Protocol::Ollama => Box::pin(ndjson::lines(body)),
        Protocol::OpenAi | Protocol::Anthropic => Box::pin(
            body.chain(stream::once(async {
                Ok(bytes::Bytes::from_static(b"\n\n"))
            }))
            .eventsource(),
        ),
    }
}

/// Streams one completion. The request is sent on the first poll. Its span (a child of whatever
/// span is current here, e.g. the retry attempt) names the provider, model and protocol.
pub(crate) fn stream(
    http: reqwest::Client,
    config: Arc<ProviderConfig>,
    request: Request,
    decoder: Decoder,
) -> EventStream {
    let span = tracing::info_span!(
        "llm_request",
        provider = %config.name,
        model = %config.model,
        protocol = %config.protocol.as_str(),
    );
    let machine = Machine {
        config,
        decoder,
        pending: VecDeque::new(),
        state: State::NotSent(http, request),
        deadline: None,
        report: Report::new(span),
        activity: Activity::new(),
    };
    run(machine)
}

fn run(machine: Machine) -> EventStream {
    Box::pin(stream::unfold(machine, |mut m| async move {
        let span = m.report.span.clone();
        match m.next_reported().instrument(span).await {
            Some(item) => {
                if item.is_err() {
                    m.state = State::Done;
                }
                Some((item, m))
            }
            None => None,
        }
    }))
}

impl Machine {
    /// The next item, noted in the request's report.
    async fn next_reported(&mut self) -> Option<Result<StreamEvent, LlmError>> {
        let item = self.next().await;
        match &item {
            Some(Ok(event)) => self.report.saw(event),
            Some(Err(e)) => self.report.failed(e),
            None => self.report.finished(),
        }
        item
    }

    async fn next(&mut self) -> Option<Result<StreamEvent, LlmError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            match std::mem::replace(&mut self.state, State::Done) {
                State::Done => return None,
                State::NotSent(http, request) => {
                    let deadline = Instant::now() + self.config.timeouts.total;
                    self.deadline = Some(deadline);
                    self.report.started = Instant::now();
                    let config = Arc::clone(&self.config);
                    match send(&http, &config, request, deadline, &self.activity).await {
                        Ok((Answer::Stream(sse), status)) => {
                            self.report.status = Some(status);
                            tracing::debug!(
                                status,
                                headers_ms = millis(self.report.started.elapsed()),
                                "response headers"
                            );
                            self.state = State::Streaming(sse);
                        }
                        Ok((Answer::Whole(body), status)) => {
                            self.report.status = Some(status);
                            // Sizes only: the body is the answer itself.
                            tracing::debug!(
                                status,
                                bytes = body.len(),
                                "whole JSON answer to a streaming request"
                            );
                            match self.decoder.decode_body(&config.name, &body) {
                                Ok(events) => self.pending.extend(events),
                                Err(e) => return Some(Err(self.redact_error(e))),
                            }
                        }
                        Err(e) => return Some(Err(e)),
                    }
                }
                State::Streaming(mut sse) => {
                    let deadline = self.deadline.unwrap_or_else(Instant::now);
                    let idle = self.config.timeouts.idle;
                    match next_event(&mut sse, &self.activity, idle, deadline).await {
                        Err(TimedOut) => return Some(Err(self.timeout_error(deadline))),
                        Ok(None) => match self.decoder.finish(&self.config.name) {
                            Ok(events) => self.pending.extend(events),
                            Err(e) => return Some(Err(self.redact_error(e))),
                        },
                        Ok(Some(Err(e))) => return Some(Err(self.sse_error(e))),
                        Ok(Some(Ok(event))) => match self.decoder.decode(&self.config.name, &event)
                        {
                            Ok(decoded) => {
                                self.pending.extend(decoded.events);
                                if !decoded.done {
                                    self.state = State::Streaming(sse);
                                }
                            }
                            Err(e) => return Some(Err(self.redact_error(e))),
                        },
                    }
                }
            }
        }
    }

    fn timeout_error(&self, deadline: Instant) -> LlmError {
        timeout_error(&self.config, deadline)
    }

    /// A decoder's error with any API key taken out of the provider's text it quotes.
    fn redact_error(&self, error: LlmError) -> LlmError {
        match error {
            LlmError::StreamError {
                provider,
                kind,
                message,
                class,
            } => LlmError::StreamError {
                provider,
                kind,
                message: self.redact(&message),
                class,
            },
            other => other,
        }
    }

    fn sse_error(&self, e: EventStreamError<reqwest::Error>) -> LlmError {
        match e {
            EventStreamError::Transport(e) => LlmError::Stream {
                provider: self.config.name.clone(),
                detail: self.redact(&error_chain(&e)),
            },
            other => LlmError::Protocol {
                provider: self.config.name.clone(),
                detail: other.to_string(),
            },
        }
    }

    fn redact(&self, text: &str) -> String {
        redact(&self.config, text)
    }
}

/// The wait for an event timed out.
struct TimedOut;

/// The next SSE event. Times out when no bytes at all arrived for `idle`, counted from the later
/// of this wait's start and the last bytes (so a comment resets it), or at the deadline.
async fn next_event(
    sse: &mut SseStream,
    activity: &Activity,
    idle: Duration,
    deadline: Instant,
) -> Result<Option<Result<Event, EventStreamError<reqwest::Error>>>, TimedOut> {
    let began = Instant::now();
    let mut next = sse.next();
    loop {
        let idle_at = activity.last().max(began) + idle;
        match tokio::time::timeout_at(idle_at.min(deadline), &mut next).await {
            Ok(item) => return Ok(item),
            Err(_) => {
                let now = Instant::now();
                if now >= deadline || activity.last().max(began) + idle <= now {
                    return Err(TimedOut);
                }
            }
        }
    }
}

async fn send(
    http: &reqwest::Client,
    config: &ProviderConfig,
    request: Request,
    deadline: Instant,
    activity: &Activity,
) -> Result<(Answer, u16), LlmError> {
    // Counts only: the body is the conversation itself.
    tracing::debug!(
        messages = request
            .body
            .get("messages")
            .and_then(serde_json::Value::as_array)
            .map(Vec::len),
        tools = request
            .body
            .get("tools")
            .and_then(serde_json::Value::as_array)
            .map(Vec::len),
        "sending request"
    );
    let accept = match config.protocol {
        Protocol::Ollama => "application/x-ndjson",
        Protocol::OpenAi | Protocol::Anthropic => "text/event-stream",
    };
    let mut builder = http
        .post(&request.url)
        .header("accept", accept)
        // Compressed streams arrive in bursts; identity keeps events flowing as produced.
        .header("accept-encoding", "identity")
        .json(&request.body);
    for (name, value) in &request.headers {
        builder = builder.header(*name, value);
    }
    let wait = config
        .timeouts
        .idle
        .min(deadline.saturating_duration_since(Instant::now()));
    let response = match tokio::time::timeout(wait, builder.send()).await {
        Err(_) => return Err(timeout_error(config, deadline)),
        Ok(Err(e)) => {
            return Err(LlmError::Connect {
                provider: config.name.clone(),
                url: request.url.clone(),
                detail: redact(config, &error_chain(&e)),
            });
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if !status.is_success() {
        return Err(status_error(config, response, deadline).await);
    }
    activity.touch();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    // Ollama streams NDJSON (`application/x-ndjson`), read line by line whatever its type says.
    let streams =
        config.protocol == Protocol::Ollama || content_type.starts_with("text/event-stream");
    let answer = if streams {
        Answer::Stream(body_events(
            config.protocol,
            response.bytes_stream(),
            activity,
        ))
    } else {
        whole_or_stream(
            config,
            response,
            deadline,
            activity,
            content_type.contains("json"),
        )
        .await?
    };
    Ok((answer, status.as_u16()))
}

/// A 200 that does not say it is an event stream. `application/json` is a whole answer (a server
/// that ignores `"stream": true`, or a 200 carrying an error: OpenRouter's once a model has
/// started). Any other type, or none, is whichever its first bytes show: a JSON answer starts
/// with `{` (after the blank lines DeepSeek sends while busy), an event stream never does.
async fn whole_or_stream(
    config: &ProviderConfig,
    response: reqwest::Response,
    deadline: Instant,
    activity: &Activity,
    json: bool,
) -> Result<Answer, LlmError> {
    let mut chunks = Box::pin(response.bytes_stream());
    let mut body = Vec::new();
    let starts = |body: &[u8]| body.iter().copied().find(|b| !b.is_ascii_whitespace());
    if !json {
        while starts(&body).is_none() {
            match read_chunk(config, &mut chunks, deadline).await? {
                Some(chunk) => {
                    activity.touch();
                    body.extend_from_slice(&chunk);
                }
                None => break,
            }
        }
        if starts(&body) != Some(b'{') {
            let head = bytes::Bytes::from(body);
            let rest = stream::once(async move { Ok(head) }).chain(chunks);
            return Ok(Answer::Stream(body_events(config.protocol, rest, activity)));
        }
    }
    while let Some(chunk) = read_chunk(config, &mut chunks, deadline).await? {
        activity.touch();
        body.extend_from_slice(&chunk);
        if body.len() > MAX_WHOLE_BODY {
            return Err(LlmError::Protocol {
                provider: config.name.clone(),
                detail: format!(
                    "a JSON answer to a streaming request is over {} MiB",
                    MAX_WHOLE_BODY / (1024 * 1024)
                ),
            });
        }
    }
    Ok(Answer::Whole(body))
}

/// The next piece of a body within the idle and total timeouts; None at its end.
async fn read_chunk<S>(
    config: &ProviderConfig,
    chunks: &mut S,
    deadline: Instant,
) -> Result<Option<bytes::Bytes>, LlmError>
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, reqwest::Error>> + Unpin,
{
    let wait = config
        .timeouts
        .idle
        .min(deadline.saturating_duration_since(Instant::now()));
    match tokio::time::timeout(wait, chunks.next()).await {
        Err(_) => Err(timeout_error(config, deadline)),
        Ok(None) => Ok(None),
        Ok(Some(Ok(chunk))) => Ok(Some(chunk)),
        Ok(Some(Err(e))) => Err(LlmError::Stream {
            provider: config.name.clone(),
            detail: redact(config, &error_chain(&e)),
        }),
    }
}

async fn status_error(
    config: &ProviderConfig,
    response: reqwest::Response,
    deadline: Instant,
) -> LlmError {
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    let wait = config
        .timeouts
        .idle
        .min(deadline.saturating_duration_since(Instant::now()));
    let _ = tokio::time::timeout(wait, async {
        while let Some(Ok(chunk)) = chunks.next().await {
            body.extend_from_slice(&chunk);
            if body.len() >= MAX_ERROR_BODY {
                break;
            }
        }
    })
    .await;
    let message = redact(config, &error_message(&body));
    let class = error::classify_status(status, &message);
    if class == decima_core::FailureClass::ContextOverflow {
        return LlmError::ContextOverflow {
            provider: config.name.clone(),
            message,
        };
    }
    LlmError::Http {
        provider: config.name.clone(),
        status,
        message,
        retry_after,
        class,
    }
}

fn timeout_error(config: &ProviderConfig, deadline: Instant) -> LlmError {
    if Instant::now() >= deadline {
        LlmError::TotalTimeout {
            provider: config.name.clone(),
            timeout: config.timeouts.total,
        }
    } else {
        LlmError::IdleTimeout {
            provider: config.name.clone(),
            timeout: config.timeouts.idle,
        }
    }
}

#[cfg(test)]
#[path = "transport_tests.rs"]
mod tests;
