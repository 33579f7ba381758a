//! Retrying transient failures. A retry after partial output first emits
//! [`StreamEvent::Discarded`], so consumers visibly drop what they showed and never persist half an
//! answer.

use std::sync::Arc;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use decima_core::FailureClass;
use futures_util::{StreamExt, stream};

use crate::provider::{EventStream, Provider};
use crate::{ChatRequest, LlmError, StreamEvent};

/// How transient failures are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: usize,
    /// The first backoff delay.
    pub min_delay: Duration,
    /// The longest backoff delay.
    pub max_delay: Duration,
    /// A `Retry-After` longer than this is not waited for: the error is returned instead, since
    /// a person should decide whether to wait that long.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            min_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

struct Retrying {
    provider: Arc<dyn Provider>,
    request: ChatRequest,
    policy: RetryPolicy,
    backoff: backon::ExponentialBackoff,
    retries: usize,
    current: Option<EventStream>,
    produced: bool,
    finished: bool,
    /// The span of the attempt in flight: each request's own span is a child of it.
    attempt: tracing::Span,
}

/// Streams `request`, retrying transient failures per `policy`. Other failures, and the last
/// transient one, end the stream with the error.
pub fn with_retry(
    provider: Arc<dyn Provider>,
    request: ChatRequest,
    policy: RetryPolicy,
) -> EventStream {
    let backoff = ExponentialBuilder::default()
        .with_min_delay(policy.min_delay)
        .with_max_delay(policy.max_delay)
        .with_max_times(policy.max_retries)
        .with_jitter()
        .build();
    let state = Retrying {
        provider,
        request,
        policy,
        backoff,
        retries: 0,
        current: None,
        produced: false,
        finished: false,
        attempt: tracing::Span::none(),
    };
    Box::pin(stream::unfold(state, |mut s| async move {
        if s.finished {
            return None;
        }
        let item = s.next().await?;
        if item.is_err() {
            s.finished = true;
        }
        Some((item, s))
    }))
}

impl Retrying {
    async fn next(&mut self) -> Option<Result<StreamEvent, LlmError>> {
        loop {
            let stream = match &mut self.current {
                Some(stream) => stream,
                None => {
                    self.produced = false;
                    self.attempt = tracing::info_span!("llm_attempt", attempt = self.retries + 1);
                    let stream = self
                        .attempt
                        .in_scope(|| self.provider.stream(&self.request));
                    self.current.insert(stream)
                }
            };
            match stream.next().await {
                None => return None,
                Some(Ok(event)) => {
                    self.produced = true;
                    return Some(Ok(event));
                }
                Some(Err(error)) => {
                    self.current = None;
                    let Some(delay) = self.delay_for(&error) else {
                        return Some(Err(error));
                    };
                    self.retries += 1;
                    let reason = format!(
                        "{error}; retrying in {:.1} s (retry {} of {})",
                        delay.as_secs_f64(),
                        self.retries,
                        self.policy.max_retries
                    );
                    tokio::time::sleep(delay).await;
                    if self.produced {
                        return Some(Ok(StreamEvent::Discarded { reason }));
                    }
                }
            }
        }
    }

    /// The wait before the next attempt, or `None` when the error must be returned. Each
    /// decision about a transient failure is logged with its class and wait, never its message.
    fn delay_for(&mut self, error: &LlmError) -> Option<Duration> {
        if error.class() != FailureClass::Transient {
            return None;
        }
        let class = error.class();
        let kind = error.kind();
        let status = error.status();
        let backoff = if self.retries < self.policy.max_retries {
            self.backoff.next()
        } else {
            None
        };
        let Some(backoff) = backoff else {
            tracing::warn!(
                parent: &self.attempt,
                %class,
                %kind,
                status,
                retries = self.retries,
                "giving up: no retries left"
            );
            return None;
        };
        let wait = match error.retry_after() {
            Some(wait) if wait > self.policy.max_retry_after => {
                tracing::warn!(
                    parent: &self.attempt,
                    %class,
                    %kind,
                    status,
                    retry_after_ms = millis(wait),
                    limit_ms = millis(self.policy.max_retry_after),
                    "not retrying: the provider asks to wait longer than the limit"
                );
                return None;
            }
            Some(wait) => wait,
            None => backoff,
        };
        tracing::warn!(
            parent: &self.attempt,
            %class,
            %kind,
            status,
            wait_ms = millis(wait),
            retry = self.retries + 1,
            max_retries = self.policy.max_retries,
            "retrying after a transient failure"
        );
        Some(wait)
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
