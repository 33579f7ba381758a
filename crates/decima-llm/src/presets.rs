//! Provider presets, kept as data in `presets/providers.json` so adding or correcting a provider
//! is an edit to one JSON file, not to code. The file is embedded at build time and parsed once.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::discovery::ServerFamily;
use crate::types::Protocol;

/// The embedded preset file.
const PRESETS_JSON: &str = include_str!("../presets/providers.json");

/// Parsed on first use. The embedded file is fixed at build time and a test parses it, so the
/// empty fallback can only appear in a build whose tests fail.
static PRESETS: LazyLock<Vec<ProviderPreset>> =
    LazyLock::new(|| parse(PRESETS_JSON).unwrap_or_default());

/// Where an OpenAI-compatible provider puts the model's reasoning in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ReasoningField {
    /// `reasoning_content` (DeepSeek, Qwen, Kimi, GLM, llama.cpp, vLLM).
    ReasoningContent,
    /// `reasoning` (OpenRouter, Ollama).
    Reasoning,
}

impl ReasoningField {
    /// The JSON field name on the wire.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The defaults a new provider row starts from, so a user picks "DeepSeek" instead of typing a
/// URL, a model and a window size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderPreset {
    /// Stable id, also the default provider name and keyring account (e.g. `deepseek`).
    pub name: String,
    /// What the settings screen shows.
    pub label: String,
    /// The wire protocol.
    pub protocol: Protocol,
    /// Which server it is, so Decima can ask it the window it serves
    /// ([`crate::discovery::discover`]); `hosted` for APIs that do not say.
    pub server: ServerFamily,
    /// OpenAI-compatible: the prefix of `/chat/completions` (with its `/v1`-style path).
    /// Anthropic: the host, to which the client appends `/v1/messages`. Ollama: the server,
    /// with or without `/v1`; the client appends `/api/chat` to its root.
    pub base_url: String,
    /// The model a new provider row starts with.
    pub default_model: String,
    /// The default model's context window, in tokens.
    pub context_window: u32,
    /// False for local servers, which accept requests without a key.
    pub needs_api_key: bool,
    /// Whether assistant turns must carry their reasoning back (DeepSeek- and Qwen-style).
    pub reasoning_echo: bool,
    /// Whether `response_format: {"type": "json_schema"}` on `/chat/completions` constrains the
    /// answer to the schema. Every OpenAI-compatible server here that constrains takes it in that
    /// one form (Ollama's `/v1` turns it into its native `format`, openai/openai.go
    /// `FromChatRequest`), so no other way of asking is needed.
    pub supports_json_schema: bool,
    /// The output cap goes as `max_completion_tokens`, OpenAI's current name for it (its
    /// reasoning models refuse `max_tokens`); the other servers take `max_tokens`.
    #[serde(default)]
    pub max_completion_tokens: bool,
    /// Where reasoning arrives in streamed deltas, if the provider streams it separately.
    pub reasoning_field: Option<ReasoningField>,
    /// Whether the server takes OpenAI's `prompt_cache_key` (strict servers refuse it).
    pub prompt_cache_key: bool,
    /// The default model's published prices; `None` where they are not known (the user sets
    /// them in Settings). Data, never fetched: Decima makes no request but to the provider.
    pub prices: Option<Prices>,
}

/// What a provider charges, in US dollars per million tokens. The cost of a run is an estimate
/// from these and the usage the provider reported.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    /// Input that no cache served.
    pub input: f64,
    /// Input read from the prompt cache.
    pub cached_input: f64,
    /// Input written to the prompt cache (Anthropic charges more; the others charge `input`).
    pub cache_write: f64,
    /// Output.
    pub output: f64,
}

impl Prices {
    /// The estimated cost, in US dollars, of `tokens_in` input tokens (of which `cache_read`
    /// were read from the cache and `cache_write` written to it) and `tokens_out` output.
    pub fn cost(&self, tokens_in: u64, cache_read: u64, cache_write: u64, tokens_out: u64) -> f64 {
        let plain = tokens_in
            .saturating_sub(cache_read)
            .saturating_sub(cache_write);
        (plain as f64 * self.input
            + cache_read as f64 * self.cached_input
            + cache_write as f64 * self.cache_write
            + tokens_out as f64 * self.output)
            / 1_000_000.0
    }

    /// Refuses negative and non-finite prices, which no provider charges.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("input", self.input),
            ("cached input", self.cached_input),
            ("cache write", self.cache_write),
            ("output", self.output),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(format!(
                    "the {name} price must be a number of dollars per million tokens, 0 or more"
                ));
            }
        }
        Ok(())
    }
}

/// Every preset, in the order the settings screen lists them.
pub fn all() -> &'static [ProviderPreset] {
    &PRESETS
}

/// The preset with this name, if any.
pub fn find(name: &str) -> Option<&'static ProviderPreset> {
    all().iter().find(|p| p.name == name)
}

fn parse(json: &str) -> serde_json::Result<Vec<ProviderPreset>> {
    serde_json::from_str(json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    const REQUIRED: [&str; 11] = [
        "openai",
        "anthropic",
        "deepseek",
        "qwen",
        "moonshot",
        "zhipu",
        "openrouter",
        "ollama",
        "lmstudio",
        "llamacpp",
        "vllm",
    ];

    #[test]
    fn every_preset_parses() {
        let parsed = parse(PRESETS_JSON).unwrap();
        assert_eq!(parsed.len(), all().len());
        assert!(!all().is_empty());
    }

    #[test]
    fn the_required_ones_exist() {
        for name in REQUIRED {
            let p = find(name).unwrap_or_else(|| panic!("missing preset {name}"));
            assert_eq!(p.name, name);
        }
        assert!(find("nope").is_none());
    }

    #[test]
    fn names_are_unique_and_valid_provider_names() {
        let mut seen = HashSet::new();
        for p in all() {
            assert!(seen.insert(p.name.as_str()), "duplicate preset {}", p.name);
            crate::secrets::validate_provider_name(&p.name).unwrap();
            assert!(!p.label.trim().is_empty(), "{}", p.name);
            assert!(!p.default_model.trim().is_empty(), "{}", p.name);
            assert!(p.context_window >= 4096, "{}", p.name);
        }
    }

    #[test]
    fn urls_parse_and_fit_their_protocol() {
        for p in all() {
            let url = reqwest::Url::parse(&p.base_url)
                .unwrap_or_else(|e| panic!("{}: {} does not parse: {e}", p.name, p.base_url));
            assert!(matches!(url.scheme(), "http" | "https"), "{}", p.name);
            assert!(!p.base_url.ends_with('/'), "{}: no trailing slash", p.name);
            assert!(url.query().is_none() && url.fragment().is_none());
            let local = matches!(url.host_str(), Some("localhost" | "127.0.0.1"));
            assert_eq!(
                local, !p.needs_api_key,
                "{}: local servers need no key, remote ones do",
                p.name
            );
            if !local {
                assert_eq!(url.scheme(), "https", "{}: keys only over TLS", p.name);
            }
            match p.protocol {
                Protocol::Anthropic => {
                    assert_eq!(
                        url.path(),
                        "/",
                        "{}: the client appends /v1/messages",
                        p.name
                    );
                    assert!(p.reasoning_field.is_none() && !p.reasoning_echo);
                }
                Protocol::Ollama => {
                    assert!(
                        matches!(url.path(), "/" | "/v1"),
                        "{}: the client appends /api/chat to the root",
                        p.name
                    );
                }
                Protocol::OpenAi => {
                    let last = url.path().rsplit('/').next().unwrap_or_default();
                    assert!(
                        last.starts_with('v') && last[1..].chars().all(|c| c.is_ascii_digit()),
                        "{}: the base ends in a version segment such as /v1",
                        p.name
                    );
                }
            }
            if p.reasoning_echo {
                assert_eq!(
                    p.reasoning_field,
                    Some(ReasoningField::ReasoningContent),
                    "{}: echoing needs a field to echo",
                    p.name
                );
            }
        }
        assert_eq!(find("anthropic").unwrap().protocol, Protocol::Anthropic);
        assert_eq!(find("ollama").unwrap().protocol, Protocol::Ollama);
        assert!(find("deepseek").unwrap().reasoning_echo);
        assert!(find("qwen").unwrap().reasoning_echo);
    }

    #[test]
    fn prices_are_valid_and_a_cached_read_costs_less_than_input() {
        for p in all() {
            if let Some(prices) = p.prices {
                prices.validate().unwrap();
                assert!(prices.cached_input <= prices.input, "{}", p.name);
            }
        }
        let anthropic = find("anthropic").unwrap().prices.unwrap();
        // 1M input of which 800k read and 100k written, 10k out, at $3 / $0.30 / $3.75 / $15.
        let cost = anthropic.cost(1_000_000, 800_000, 100_000, 10_000);
        assert!((cost - (0.3 + 0.24 + 0.375 + 0.15)).abs() < 1e-9, "{cost}");
        assert!(find("openai").unwrap().prompt_cache_key);
        assert!(!find("vllm").unwrap().prompt_cache_key);
        let bad = Prices {
            output: -1.0,
            ..Prices::default()
        };
        assert!(bad.validate().is_err());
    }

    #[test]
    fn every_preset_names_the_server_it_is() {
        let expected = |name: &str| match name {
            "llamacpp" => ServerFamily::LlamaCpp,
            "ollama" => ServerFamily::Ollama,
            "lmstudio" => ServerFamily::LmStudio,
            "vllm" => ServerFamily::Vllm,
            "openrouter" => ServerFamily::OpenRouter,
            _ => ServerFamily::Hosted,
        };
        for p in all() {
            assert_eq!(p.server, expected(&p.name), "{}", p.name);
            let url = reqwest::Url::parse(&p.base_url).unwrap();
            let local = matches!(url.host_str(), Some("localhost" | "127.0.0.1"));
            let port = url.port();
            match p.server {
                ServerFamily::Hosted | ServerFamily::OpenRouter => {
                    assert!(!local, "{}: a hosted API is not on this machine", p.name)
                }
                family => {
                    assert!(local, "{}: a local server", p.name);
                    let default_port = match family {
                        ServerFamily::LlamaCpp => 8080,
                        ServerFamily::Ollama => 11434,
                        ServerFamily::LmStudio => 1234,
                        ServerFamily::Vllm => 8000,
                        ServerFamily::Sglang => 30000,
                        ServerFamily::Hosted | ServerFamily::OpenRouter => unreachable!(),
                    };
                    assert_eq!(
                        port,
                        Some(default_port),
                        "{}: the server's own port",
                        p.name
                    );
                    let native = match family {
                        ServerFamily::Ollama => Protocol::Ollama,
                        _ => Protocol::OpenAi,
                    };
                    assert_eq!(p.protocol, native, "{}", p.name);
                }
            }
        }
        let without = PRESETS_JSON.replacen("\"server\": \"hosted\",", "", 1);
        assert!(parse(&without).is_err(), "the server is required");
        let unknown = PRESETS_JSON.replacen("\"hosted\"", "\"mainframe\"", 1);
        assert!(parse(&unknown).is_err(), "an unknown server is refused");
    }

    #[test]
    fn structured_output_is_claimed_only_where_the_server_constrains() {
        // llama.cpp, vLLM, LM Studio (its structured-output docs) and Ollama (whose /v1 maps
        // the schema to its `format`) constrain; OpenAI and OpenRouter's models take it. DeepSeek,
        // Moonshot and Zhipu take only `json_object`; Anthropic's protocol has no such field.
        for p in all() {
            let constrains = match p.server {
                ServerFamily::Hosted => p.name == "openai",
                _ => true,
            };
            assert_eq!(p.supports_json_schema, constrains, "{}", p.name);
        }
    }

    #[test]
    fn unknown_fields_are_refused() {
        let json = PRESETS_JSON.replacen("\"label\"", "\"api_key\": \"x\", \"label\"", 1);
        assert!(parse(&json).is_err());
    }
}
