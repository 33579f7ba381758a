//! Asks a model server what context window it actually serves.
//!
//! A window taken on trust overflows: Decima once planned for 128,000 tokens against a llama.cpp
//! server started with 4,096. Each server family says it its own way, so each has its file here:
//! llama.cpp's `/props` and `/slots`, Ollama's `/api/show` and `/api/ps`, vLLM's and SGLang's
//! `max_model_len` in `/v1/models`, LM Studio's `/api/v0/models`, OpenRouter's model list.
//! Hosted APIs do not say, and are not asked.

mod llamacpp;
mod lmstudio;
mod ollama;
mod openai_models;
mod openrouter;

use std::time::Duration;

use decima_core::FailureClass;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::provider::{ProviderConfig, shared_client};
use crate::transport::redact;
use crate::{LlmError, classify_status};

/// Which server family a provider is, so Decima knows how to ask it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerFamily {
    /// llama.cpp's `llama-server`.
    LlamaCpp,
    /// Ollama.
    Ollama,
    /// vLLM's OpenAI-compatible server.
    Vllm,
    /// SGLang's OpenAI-compatible server.
    Sglang,
    /// LM Studio.
    LmStudio,
    /// OpenRouter.
    OpenRouter,
    /// A hosted API (OpenAI, Anthropic, DeepSeek, ...), which does not say its window.
    Hosted,
}

impl ServerFamily {
    /// A server the analyst runs (not a hosted API): it says what window it serves, and it
    /// decodes structured answers under a grammar compiled from the schema.
    pub fn is_local(self) -> bool {
        !matches!(self, ServerFamily::OpenRouter | ServerFamily::Hosted)
    }

    /// The family's name in messages.
    pub fn label(self) -> &'static str {
        match self {
            ServerFamily::LlamaCpp => "llama.cpp",
            ServerFamily::Ollama => "Ollama",
            ServerFamily::Vllm => "vLLM",
            ServerFamily::Sglang => "SGLang",
            ServerFamily::LmStudio => "LM Studio",
            ServerFamily::OpenRouter => "OpenRouter",
            ServerFamily::Hosted => "the hosted API",
        }
    }
}

/// What a server says it serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Served {
    /// The context window a request gets, in tokens: what to plan for.
    pub window: u32,
    /// llama.cpp: the `n_ctx` of each slot (a request gets one slot; `window` is the smallest).
    /// Empty for the other families.
    pub slots: Vec<u32>,
    /// Who said it.
    pub family: ServerFamily,
    /// The model the answer is about, as the server names it.
    pub model: Option<String>,
    /// The most the model itself takes (its trained window), where the server says; more than
    /// `window` when the server was started or loaded with less.
    #[serde(default)]
    pub model_max: Option<u32>,
    /// The server could not say yet (Ollama before it loads the model) and `window` is the
    /// smallest it loads the model with by default: ask again once the model is loaded.
    #[serde(default)]
    pub floor: bool,
}

/// The largest window Decima believes: no model serves more, so a larger figure is a server (or
/// something in front of it) answering wrongly.
pub const MAX_WINDOW: u32 = 100_000_000;

/// How long one discovery request may take, so a hung server cannot hold up setup.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// Largest body read from a discovery answer (OpenRouter's list of every model is a few MB).
const MAX_BODY: usize = 32 * 1024 * 1024;

/// Asks the server. Ok(None) where the family has no way to say (Hosted, or OpenRouter's list
/// lacks the model, or LM Studio has not loaded it). Err with an actionable message on garbage,
/// a window of 0 or an absurd one (over [`MAX_WINDOW`]), or an unreachable server.
pub async fn discover(
    config: &ProviderConfig,
    family: ServerFamily,
) -> Result<Option<Served>, LlmError> {
    if family == ServerFamily::Hosted {
        return Ok(None);
    }
    let asker = Asker::new(config, family)?;
    let served = match family {
        ServerFamily::LlamaCpp => llamacpp::discover(&asker).await.map(Some),
        ServerFamily::Ollama => ollama::discover(&asker).await.map(Some),
        ServerFamily::Vllm | ServerFamily::Sglang => openai_models::discover(&asker).await,
        ServerFamily::LmStudio => lmstudio::discover(&asker).await,
        ServerFamily::OpenRouter => openrouter::discover(&asker).await,
        ServerFamily::Hosted => Ok(None),
    }?;
    match &served {
        Some(s) => tracing::info!(
            provider = %config.name,
            family = family.label(),
            window = s.window,
            model_max = ?s.model_max,
            floor = s.floor,
            "the server says what window it serves"
        ),
        None => tracing::info!(
            provider = %config.name,
            family = family.label(),
            "the server does not say what window it serves"
        ),
    }
    Ok(served)
}

/// Sends the discovery requests of one provider and words their failures.
pub(crate) struct Asker<'a> {
    pub(crate) config: &'a ProviderConfig,
    pub(crate) family: ServerFamily,
    http: reqwest::Client,
    timeout: Duration,
}

/// A discovery answer: its status and body, and the request it answers ("GET http://.../props").
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
    pub(crate) what: String,
}

impl<'a> Asker<'a> {
    fn new(config: &'a ProviderConfig, family: ServerFamily) -> Result<Self, LlmError> {
        let url = reqwest::Url::parse(&config.base_url).map_err(|e| {
            LlmError::Config(format!(
                "the base URL '{}' of {} is not valid: {e}",
                redact(config, &config.base_url),
                config.name
            ))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(LlmError::Config(format!(
                "the base URL of {} must start with http:// or https://",
                config.name
            )));
        }
        let http = shared_client(config.timeouts.connect).map_err(|e| {
            LlmError::Config(format!("cannot set up HTTP for {}: {e}", config.name))
        })?;
        Ok(Self {
            config,
            family,
            http,
            timeout: REQUEST_TIMEOUT.min(config.timeouts.total),
        })
    }

    /// The OpenAI-compatible prefix, e.g. `http://localhost:8080/v1`.
    pub(crate) fn base(&self) -> &str {
        self.config.base_url.trim_end_matches('/')
    }

    /// The server's root: the base without its trailing `/v1`, where native endpoints live.
    pub(crate) fn root(&self) -> &str {
        let base = self.base();
        base.strip_suffix("/v1").unwrap_or(base)
    }

    /// GETs `url`.
    pub(crate) async fn get(&self, url: &str) -> Result<Answer, LlmError> {
        self.send(self.http.get(url), "GET", url).await
    }

    /// POSTs `body` as JSON to `url`.
    pub(crate) async fn post(&self, url: &str, body: &Value) -> Result<Answer, LlmError> {
        self.send(self.http.post(url).json(body), "POST", url).await
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        method: &str,
        url: &str,
    ) -> Result<Answer, LlmError> {
        let what = format!("{method} {}", redact(self.config, url));
        let mut request = request.timeout(self.timeout);
        for (name, value) in crate::openai::headers(self.config) {
            request = request.header(name, value);
        }
        tracing::debug!(provider = %self.config.name, request = %what, "asking the server its window");
        let mut response = request
            .send()
            .await
            .map_err(|e| self.unreachable(&what, &e))?;
        let status = response.status().as_u16();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.unreachable(&what, &e))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_BODY {
                return Err(self.protocol(format!(
                    "{what} answered with more than {} MiB, which no discovery answer is",
                    MAX_BODY / (1024 * 1024)
                )));
            }
        }
        Ok(Answer { status, body, what })
    }

    fn unreachable(&self, what: &str, e: &reqwest::Error) -> LlmError {
        let cause = if e.is_timeout() {
            format!("no answer within {} s", self.timeout.as_secs())
        } else {
            error_chain(e)
        };
        LlmError::Connect {
            provider: self.config.name.clone(),
            url: redact(self.config, self.base()),
            detail: redact(
                self.config,
                &format!(
                    "{what} failed ({cause}); is {} running there?",
                    self.family.label()
                ),
            ),
        }
    }

    /// A Config error (something the user sets is wrong) with `message`, the key redacted.
    pub(crate) fn config_error(&self, message: String) -> LlmError {
        LlmError::Config(redact(self.config, &message))
    }

    /// A Protocol error with `detail`, the key redacted.
    pub(crate) fn protocol(&self, detail: String) -> LlmError {
        LlmError::Protocol {
            provider: self.config.name.clone(),
            detail: redact(self.config, &detail),
        }
    }

    /// The error for an answer with an error status.
    pub(crate) fn status_error(&self, answer: &Answer) -> LlmError {
        let message = redact(
            self.config,
            &format!(
                "{} (asking {} its context window): {}",
                answer.what,
                self.family.label(),
                crate::transport::error_message(&answer.body)
            ),
        );
        let class = match classify_status(answer.status, &message) {
            // A discovery request never sends a prompt, so no answer is about its length.
            FailureClass::ContextOverflow => FailureClass::Data,
            class => class,
        };
        LlmError::Http {
            provider: self.config.name.clone(),
            status: answer.status,
            message,
            retry_after: None,
            class,
        }
    }

    /// The answer's JSON: an error for an error status or a body that is not JSON.
    pub(crate) fn json(&self, answer: &Answer) -> Result<Value, LlmError> {
        if !(200..300).contains(&answer.status) {
            return Err(self.status_error(answer));
        }
        serde_json::from_slice(&answer.body).map_err(|_| {
            self.protocol(format!(
                "{} answered with a body that is not JSON ({}); is {} a {} server?",
                answer.what,
                snippet(&answer.body),
                self.base(),
                self.family.label()
            ))
        })
    }

    /// The error for JSON without the field Decima reads.
    pub(crate) fn missing(&self, answer: &Answer, field: &str) -> LlmError {
        self.protocol(format!(
            "{} answered JSON without {field}; is {} a {} server?",
            answer.what,
            self.base(),
            self.family.label()
        ))
    }

    /// A reported window, checked: a whole number of tokens from 1 to [`MAX_WINDOW`].
    pub(crate) fn window(&self, value: &Value, field: &str, what: &str) -> Result<u32, LlmError> {
        let reported = match value {
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => Some(i128::from(u)),
                (None, Some(i), _) => Some(i128::from(i)),
                (None, None, Some(f)) if f.fract() == 0.0 && f.is_finite() => {
                    Some(f.clamp(-1e30, 1e30) as i128)
                }
                _ => None,
            },
            _ => None,
        };
        let Some(reported) = reported else {
            return Err(self.protocol(format!(
                "{what} gave {field} as {}, not a whole number of tokens",
                short(&value.to_string())
            )));
        };
        self.checked(reported, field, what)
    }

    /// A window as a number, checked (see [`Asker::window`]).
    pub(crate) fn checked(&self, reported: i128, field: &str, what: &str) -> Result<u32, LlmError> {
        let family = self.family.label();
        match u32::try_from(reported) {
            Ok(window) if (1..=MAX_WINDOW).contains(&window) => Ok(window),
            _ if reported <= 0 => Err(self.protocol(format!(
                "{family} reported a context window of {reported} tokens ({field} in {what}); \
                 Decima refused it, since no request fits in it{}",
                if self.family == ServerFamily::LlamaCpp {
                    " (a llama-server in router mode reports 0 until it has loaded a model: \
                     load one, or start it with -m MODEL)"
                } else {
                    ""
                }
            ))),
            _ => Err(self.protocol(format!(
                "{family} reported a context window of {reported} tokens ({field} in {what}); \
                 Decima refused it: no model serves more than {MAX_WINDOW} tokens, so the server \
                 or something in front of it answers wrongly"
            ))),
        }
    }
}

/// reqwest's error with its causes, which carry the useful part ("connection refused").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The start of a body for a message: printable, on one line, bounded.
fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return "an empty body".into();
    }
    format!("it starts {:?}", short(text))
}

/// At most 60 characters of `text`, control characters dropped.
fn short(text: &str) -> String {
    let mut out: String = text.chars().filter(|c| !c.is_control()).take(60).collect();
    if text.chars().filter(|c| !c.is_control()).nth(60).is_some() {
        out.push('…');
    }
    out
}

/// Whether two model names are the same model: case aside, and Ollama's `:latest` tag optional.
pub(crate) fn same_model(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        let s = s.trim();
        s.strip_suffix(":latest").unwrap_or(s).to_ascii_lowercase()
    };
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Protocol;

    fn asker(config: &ProviderConfig, family: ServerFamily) -> Asker<'_> {
        Asker::new(config, family).unwrap()
    }

    fn config(base: &str) -> ProviderConfig {
        ProviderConfig::new("local", Protocol::OpenAi, base, "m")
    }

    #[test]
    fn the_root_is_the_base_without_its_v1() {
        let c = config("http://localhost:8080/v1");
        assert_eq!(
            asker(&c, ServerFamily::LlamaCpp).root(),
            "http://localhost:8080"
        );
        let c = config("http://localhost:8080/v1/");
        assert_eq!(
            asker(&c, ServerFamily::LlamaCpp).root(),
            "http://localhost:8080"
        );
        let c = config("https://openrouter.ai/api/v1");
        assert_eq!(
            asker(&c, ServerFamily::OpenRouter).base(),
            "https://openrouter.ai/api/v1"
        );
        let c = config("http://host:1234");
        assert_eq!(asker(&c, ServerFamily::LmStudio).root(), "http://host:1234");
    }

    #[test]
    fn windows_are_checked() {
        let c = config("http://localhost:8080/v1");
        let a = asker(&c, ServerFamily::LlamaCpp);
        let w = |v: Value| a.window(&v, "n_ctx", "GET /props");
        assert_eq!(w(serde_json::json!(4096)).unwrap(), 4096);
        assert_eq!(w(serde_json::json!(4096.0)).unwrap(), 4096);
        assert_eq!(w(serde_json::json!(MAX_WINDOW)).unwrap(), MAX_WINDOW);
        let zero = w(serde_json::json!(0)).unwrap_err().to_string();
        assert!(
            zero.contains("of 0 tokens") && zero.contains("refused"),
            "{zero}"
        );
        assert!(zero.contains("router mode"), "{zero}");
        let huge = w(serde_json::json!(1_000_000_000u64))
            .unwrap_err()
            .to_string();
        assert!(
            huge.contains("1000000000 tokens") && huge.contains("refused"),
            "{huge}"
        );
        assert!(w(serde_json::json!(u64::MAX)).is_err());
        assert!(w(serde_json::json!(1e300)).is_err());
        assert!(
            w(serde_json::json!(-1))
                .unwrap_err()
                .to_string()
                .contains("-1 tokens")
        );
        let text = w(serde_json::json!("4096")).unwrap_err().to_string();
        assert!(text.contains("not a whole number"), "{text}");
        assert!(w(serde_json::json!(4096.5)).is_err());
        assert!(w(Value::Null).is_err());
        let c = config("http://localhost:11434/v1");
        let zero = asker(&c, ServerFamily::Ollama)
            .checked(0, "num_ctx", "POST /api/show")
            .unwrap_err()
            .to_string();
        assert!(!zero.contains("router mode"), "{zero}");
    }

    #[test]
    fn snippets_are_short_and_printable() {
        assert_eq!(snippet(b"  "), "an empty body");
        let s = snippet(b"<html>\n<body>Bad gateway</body></html>");
        assert!(s.contains("<html><body>Bad gateway"), "{s}");
        let long = snippet(&[b'x'; 500]);
        assert!(long.chars().count() < 80, "{long}");
    }

    #[test]
    fn model_names_match_case_and_latest_aside() {
        assert!(same_model("llama3.1", "llama3.1:latest"));
        assert!(same_model("Qwen/Qwen3-8B", "qwen/qwen3-8b"));
        assert!(!same_model("llama3.1:8b", "llama3.1:latest"));
    }

    #[test]
    fn families_read_as_the_presets_write_them() {
        for (text, family) in [
            ("\"llama_cpp\"", ServerFamily::LlamaCpp),
            ("\"ollama\"", ServerFamily::Ollama),
            ("\"vllm\"", ServerFamily::Vllm),
            ("\"sglang\"", ServerFamily::Sglang),
            ("\"lm_studio\"", ServerFamily::LmStudio),
            ("\"open_router\"", ServerFamily::OpenRouter),
            ("\"hosted\"", ServerFamily::Hosted),
        ] {
            assert_eq!(serde_json::from_str::<ServerFamily>(text).unwrap(), family);
            assert_eq!(serde_json::to_string(&family).unwrap(), text);
        }
    }
}
