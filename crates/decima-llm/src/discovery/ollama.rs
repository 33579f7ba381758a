//! Ollama (ollama/ollama).
//!
//! The window a request to `/v1/chat/completions` gets is the `num_ctx` the runner is loaded
//! with, and that endpoint has no way to set it (openai/openai.go, `FromChatRequest`, builds the
//! options from `max_tokens`, `temperature`, `stop` and a few more; an `options` object is not
//! read). So it is, in order (server/routes.go, `modelOptions` and `usesAutomaticNumCtx`):
//!
//! 1. the modelfile's own `num_ctx`, a line of `parameters` in `POST /api/show`, capped at the
//!    model's trained `model_info["<arch>.context_length"]` (llm/server.go);
//! 2. else what the loaded runner has, `context_length` of the model in `GET /api/ps` (what
//!    Ollama's own launcher reads, cmd/launch/context_window.go): the default Ollama picked,
//!    `OLLAMA_CONTEXT_LENGTH` or 4,096 / 32,768 / 262,144 by VRAM (server/routes.go);
//! 3. else, with the model not loaded, 4,096 as a floor: the smallest default.
//!
//! A model on ollama.com (`remote_host` set) serves its whole `context_length`.

use serde_json::{Value, json};

use super::{Answer, Asker, Served, ServerFamily, same_model};
use crate::LlmError;

/// The smallest window Ollama loads a model with by default (server/routes.go, below 23 GiB of
/// VRAM).
pub(crate) const DEFAULT_FLOOR: u32 = 4096;

/// What `/api/show` says about a model.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Show {
    /// `model_info["<arch>.context_length"]`: what the model was trained for.
    pub(crate) context_length: Option<u32>,
    /// The modelfile's `num_ctx`.
    pub(crate) num_ctx: Option<u32>,
    /// Served from ollama.com rather than by this machine's runner.
    pub(crate) remote: bool,
}

/// Asks `/api/show`, then, without a modelfile `num_ctx`, `/api/ps`.
pub(crate) async fn discover(asker: &Asker<'_>) -> Result<Served, LlmError> {
    let model = asker.config.model.as_str();
    let root = asker.root();
    let answer = asker
        .post(&format!("{root}/api/show"), &json!({ "model": model }))
        .await?;
    if answer.status == 404 {
        return Err(asker.config_error(format!(
            "Ollama at {root} has no model '{model}' ({}): pull it with `ollama pull {model}`, \
             or set the model of {} to one `ollama list` shows",
            crate::transport::error_message(&answer.body),
            asker.config.name
        )));
    }
    let show = parse_show(asker, &answer, &asker.json(&answer)?)?;
    let served = |window, floor| Served {
        window,
        slots: Vec::new(),
        family: ServerFamily::Ollama,
        model: Some(model.to_owned()),
        model_max: show.context_length,
        floor,
    };
    if let Some(num_ctx) = show.num_ctx {
        return Ok(served(
            show.context_length.map_or(num_ctx, |max| max.min(num_ctx)),
            false,
        ));
    }
    if show.remote
        && let Some(max) = show.context_length
    {
        return Ok(served(max, false));
    }
    let answer = asker.get(&format!("{root}/api/ps")).await?;
    if let Some(loaded) = parse_ps(asker, &answer, &asker.json(&answer)?, model)? {
        return Ok(served(loaded, false));
    }
    let floor = show
        .context_length
        .map_or(DEFAULT_FLOOR, |max| max.min(DEFAULT_FLOOR));
    tracing::info!(
        provider = %asker.config.name,
        model,
        floor,
        "Ollama has not loaded the model and its modelfile sets no num_ctx: planning for Ollama's smallest default until it is loaded"
    );
    Ok(served(floor, true))
}

/// Reads `/api/show`.
pub(crate) fn parse_show(
    asker: &Asker<'_>,
    answer: &Answer,
    json: &Value,
) -> Result<Show, LlmError> {
    let info = json
        .get("model_info")
        .filter(|info| info.is_object())
        .ok_or_else(|| asker.missing(answer, "model_info"))?;
    let arch = info.get("general.architecture").and_then(Value::as_str);
    let context_length = match arch.and_then(|arch| info.get(format!("{arch}.context_length"))) {
        Some(n) => Some(asker.window(n, "model_info.<arch>.context_length", &answer.what)?),
        None => None,
    };
    let parameters = json
        .get("parameters")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let num_ctx = match num_ctx_parameter(parameters) {
        Some(Ok(n)) => Some(asker.checked(n, "the num_ctx parameter", &answer.what)?),
        Some(Err(text)) => {
            return Err(asker.protocol(format!(
                "{} gave the num_ctx parameter as {text:?}, not a whole number of tokens",
                answer.what
            )));
        }
        None => None,
    };
    let remote = json
        .get("remote_host")
        .and_then(Value::as_str)
        .is_some_and(|host| !host.is_empty());
    Ok(Show {
        context_length,
        num_ctx,
        remote,
    })
}

/// The `num_ctx` line of `/api/show`'s `parameters`: the name padded to 30 columns, a space,
/// then Go's `%#v` of the value (server/routes.go, `GetModelInfo`): `8192`, or `8.192e+06` for a
/// large float. Err carries the text of a value that is not a whole number.
pub(crate) fn num_ctx_parameter(parameters: &str) -> Option<Result<i128, String>> {
    parameters.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        if words.next() != Some("num_ctx") {
            return None;
        }
        let value = words.next().unwrap_or_default().trim_matches('"');
        Some(whole(value).ok_or_else(|| value.to_owned()))
    })
}

fn whole(text: &str) -> Option<i128> {
    if let Ok(n) = text.parse::<i128>() {
        return Some(n);
    }
    let f = text.parse::<f64>().ok()?;
    (f.is_finite() && f.fract() == 0.0).then_some(f.clamp(-1e30, 1e30) as i128)
}

/// Reads `/api/ps`: the `context_length` the model is loaded with, if it is loaded.
pub(crate) fn parse_ps(
    asker: &Asker<'_>,
    answer: &Answer,
    json: &Value,
    model: &str,
) -> Result<Option<u32>, LlmError> {
    let models = json
        .get("models")
        .and_then(Value::as_array)
        .ok_or_else(|| asker.missing(answer, "models"))?;
    let running = models.iter().find(|m| {
        ["name", "model"]
            .iter()
            .filter_map(|key| m.get(*key).and_then(Value::as_str))
            .any(|name| same_model(name, model))
    });
    match running.and_then(|m| m.get("context_length")) {
        // Before Ollama reported it, or 0 for a model still loading: not known yet.
        None | Some(Value::Null) => Ok(None),
        Some(n) if n.as_u64() == Some(0) => Ok(None),
        Some(n) => asker.window(n, "context_length", &answer.what).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Protocol, ProviderConfig};

    /// `POST /api/show` for llama3.1 as Ollama's docs/api.md shows it, in the order and escaping
    /// Go's encoding/json writes (keys of `model_info` sorted, `<` as `\u003c`), with a
    /// modelfile `num_ctx`.
    const SHOW: &str = r##"{"license":"LLAMA 3.1 COMMUNITY LICENSE AGREEMENT","modelfile":"# Modelfile generated by \"ollama show\"\n# To build a new Modelfile based on this, replace FROM with:\n# FROM llama3.1:latest\n\nFROM /root/.ollama/models/blobs/sha256-667b0c1932bc6ffc593ed1d03f895bf2dc8dc6df21db3042284a6f4416b06a29\nPARAMETER num_ctx 8192\nPARAMETER stop \u003c|eot_id|\u003e\n","parameters":"num_ctx                        8192\nstop                           \"\u003c|start_header_id|\u003e\"\nstop                           \"\u003c|eot_id|\u003e\"","template":"{{ .Prompt }}","details":{"parent_model":"","format":"gguf","family":"llama","families":["llama"],"parameter_size":"8.0B","quantization_level":"Q4_K_M"},"model_info":{"general.architecture":"llama","general.file_type":15,"general.parameter_count":8030261312,"general.quantization_version":2,"llama.attention.head_count":32,"llama.attention.head_count_kv":8,"llama.attention.layer_norm_rms_epsilon":0.00001,"llama.block_count":32,"llama.context_length":131072,"llama.embedding_length":4096,"llama.feed_forward_length":14336,"llama.rope.dimension_count":128,"llama.rope.freq_base":500000,"llama.vocab_size":128256,"tokenizer.ggml.bos_token_id":128000,"tokenizer.ggml.eos_token_id":128009,"tokenizer.ggml.merges":[],"tokenizer.ggml.model":"gpt2","tokenizer.ggml.pre":"llama-bpe","tokenizer.ggml.token_type":[],"tokenizer.ggml.tokens":[]},"capabilities":["completion","tools"],"modified_at":"2025-06-04T14:38:31.83753-07:00"}"##;

    /// `GET /api/ps` with the model loaded by Ollama's VRAM default.
    const PS: &str = r#"{"models":[{"name":"llama3.1:latest","model":"llama3.1:latest","size":6654289920,"digest":"46e0c10c039e019119339687c3c1757cc81b9da49709a3b3924863ba87ca666e","details":{"parent_model":"","format":"gguf","family":"llama","families":["llama"],"parameter_size":"8.0B","quantization_level":"Q4_K_M"},"expires_at":"2025-06-04T14:43:31.83753-07:00","size_vram":6654289920,"context_length":32768}]}"#;

    fn config() -> ProviderConfig {
        ProviderConfig::new(
            "ollama",
            Protocol::OpenAi,
            "http://127.0.0.1:11434/v1",
            "llama3.1",
        )
    }

    fn answer(what: &str, body: &str) -> Answer {
        Answer {
            status: 200,
            body: body.as_bytes().to_vec(),
            what: what.into(),
        }
    }

    fn show(body: &str) -> Result<Show, LlmError> {
        let config = config();
        let asker = Asker::new(&config, ServerFamily::Ollama).unwrap();
        let answer = answer("POST /api/show", body);
        parse_show(&asker, &answer, &asker.json(&answer)?)
    }

    fn ps(body: &str, model: &str) -> Result<Option<u32>, LlmError> {
        let config = config();
        let asker = Asker::new(&config, ServerFamily::Ollama).unwrap();
        let answer = answer("GET /api/ps", body);
        parse_ps(&asker, &answer, &asker.json(&answer)?, model)
    }

    #[test]
    fn show_gives_the_trained_window_and_the_modelfile_num_ctx() {
        assert_eq!(
            show(SHOW).unwrap(),
            Show {
                context_length: Some(131_072),
                num_ctx: Some(8192),
                remote: false
            }
        );
        let without = SHOW.replace(r#"num_ctx                        8192\n"#, "");
        assert_eq!(show(&without).unwrap().num_ctx, None);
        let remote = SHOW.replace(
            r#""capabilities""#,
            r#""remote_model":"gpt-oss:120b","remote_host":"https://ollama.com:443","capabilities""#,
        );
        assert!(show(&remote).unwrap().remote);
    }

    #[test]
    fn show_without_a_known_architecture_has_no_trained_window() {
        let body = r#"{"modelfile":"","details":{},"model_info":{},"capabilities":["completion"]}"#;
        assert_eq!(show(body).unwrap(), Show::default());
        assert!(show(r#"{"error":"nope"}"#).is_err());
    }

    #[test]
    fn unusable_show_windows_are_refused() {
        let e = show(&SHOW.replace("131072", "0")).unwrap_err().to_string();
        assert!(e.contains("0 tokens") && e.contains("refused"), "{e}");
        let e = show(&SHOW.replace("8192\\n", "1000000000\\n"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("1000000000 tokens") && e.contains("refused"),
            "{e}"
        );
        let e = show(&SHOW.replace("8192\\n", "lots\\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"lots\""), "{e}");
    }

    #[test]
    fn num_ctx_reads_go_formatting() {
        assert_eq!(
            num_ctx_parameter("num_ctx                        8192"),
            Some(Ok(8192))
        );
        assert_eq!(num_ctx_parameter("num_ctx 8.192e+06"), Some(Ok(8_192_000)));
        assert_eq!(num_ctx_parameter("stop \"x\"\nnum_keep 24"), None);
        assert_eq!(num_ctx_parameter("num_ctx_extra 5"), None);
    }

    #[test]
    fn ps_gives_the_loaded_window_of_the_model_only() {
        assert_eq!(ps(PS, "llama3.1").unwrap(), Some(32_768));
        assert_eq!(ps(PS, "llama3.1:latest").unwrap(), Some(32_768));
        assert_eq!(ps(PS, "qwen3").unwrap(), None);
        assert_eq!(ps(r#"{"models":[]}"#, "llama3.1").unwrap(), None);
        let old = PS.replace(r#","context_length":32768"#, "");
        assert_eq!(ps(&old, "llama3.1").unwrap(), None);
        let e = ps(&PS.replace("32768", "1000000000"), "llama3.1").unwrap_err();
        assert!(e.to_string().contains("refused"), "{e}");
        assert!(ps(r#"{"error":"x"}"#, "llama3.1").is_err());
    }
}
