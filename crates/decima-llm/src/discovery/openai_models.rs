//! vLLM and SGLang: `GET /v1/models`, whose model cards carry `max_model_len`, the window the
//! server was started with (`--max-model-len`, `--context-length`) or the model's own.
//!
//! vLLM: vllm/entrypoints/openai/engine/protocol.py `ModelCard`, filled by
//! vllm/entrypoints/openai/models/serving.py `show_available_models`; a LoRA adapter's card has
//! no `max_model_len` but names its base model in `parent`. SGLang: `ModelCard` in
//! python/sglang/srt/entrypoints/openai/protocol.py.

use serde_json::Value;

use super::{Answer, Asker, Served, same_model};
use crate::LlmError;

/// Asks `/v1/models`. Ok(None) when the card gives no `max_model_len`.
pub(crate) async fn discover(asker: &Asker<'_>) -> Result<Option<Served>, LlmError> {
    let answer = asker.get(&format!("{}/models", asker.base())).await?;
    let json = asker.json(&answer)?;
    let Some((model, window)) = parse_models(asker, &answer, &json)? else {
        return Ok(None);
    };
    Ok(Some(Served {
        window,
        slots: Vec::new(),
        family: asker.family,
        model: Some(model),
        model_max: None,
        floor: false,
    }))
}

/// The configured model's card (or the only one) and its window; None when it has none.
pub(crate) fn parse_models(
    asker: &Asker<'_>,
    answer: &Answer,
    json: &Value,
) -> Result<Option<(String, u32)>, LlmError> {
    let cards = json
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| asker.missing(answer, "data"))?;
    let id = |card: &Value| card.get("id").and_then(Value::as_str).map(str::to_owned);
    let wanted = asker.config.model.as_str();
    let card = match cards
        .iter()
        .find(|c| id(c).is_some_and(|id| same_model(&id, wanted)))
    {
        Some(card) => card,
        None => match cards.as_slice() {
            [only] => {
                tracing::warn!(
                    provider = %asker.config.name,
                    configured = wanted,
                    served = id(only).unwrap_or_default(),
                    "the server lists one model, not the configured one; reading its window"
                );
                only
            }
            _ => {
                let listed: Vec<String> = cards.iter().filter_map(id).collect();
                return Err(asker.config_error(format!(
                    "{} at {} does not serve the model '{wanted}' of {} (it serves: {}); set \
                     the model to one of those",
                    asker.family.label(),
                    asker.base(),
                    asker.config.name,
                    if listed.is_empty() {
                        "nothing".to_owned()
                    } else {
                        listed.join(", ")
                    }
                )));
            }
        },
    };
    let name = id(card).ok_or_else(|| asker.missing(answer, "a model's id"))?;
    let field = "max_model_len";
    let len = match card.get(field).filter(|v| !v.is_null()) {
        Some(len) => Some(len),
        // A LoRA adapter: its base model's window.
        None => card
            .get("parent")
            .and_then(Value::as_str)
            .and_then(|parent| cards.iter().find(|c| id(c).as_deref() == Some(parent)))
            .and_then(|base| base.get(field))
            .filter(|v| !v.is_null()),
    };
    match len {
        Some(len) => Ok(Some((name, asker.window(len, field, &answer.what)?))),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::ServerFamily;
    use crate::{Protocol, ProviderConfig};

    /// vLLM's `GET /v1/models` with a LoRA adapter loaded: Starlette's compact JSON of
    /// `ModelList.model_dump()`.
    const VLLM: &str = r#"{"object":"list","data":[{"id":"Qwen/Qwen3-8B","object":"model","created":1760000000,"owned_by":"vllm","root":"/models/Qwen3-8B","parent":null,"max_model_len":32768,"permission":[{"id":"modelperm-9d1b6a3e8c4f4e0f9d1e2a3b4c5d6e7f","object":"model_permission","created":1760000000,"allow_create_engine":false,"allow_sampling":true,"allow_logprobs":true,"allow_search_indices":false,"allow_view":true,"allow_fine_tuning":false,"organization":"*","group":null,"is_blocking":false}]},{"id":"sql-lora","object":"model","created":1760000000,"owned_by":"vllm","root":"/adapters/sql","parent":"Qwen/Qwen3-8B","max_model_len":null,"permission":[{"id":"modelperm-0a1b2c3d4e5f60718293a4b5c6d7e8f9","object":"model_permission","created":1760000000,"allow_create_engine":false,"allow_sampling":true,"allow_logprobs":true,"allow_search_indices":false,"allow_view":true,"allow_fine_tuning":false,"organization":"*","group":null,"is_blocking":false}]}]}"#;

    /// SGLang's `GET /v1/models`.
    const SGLANG: &str = r#"{"object":"list","data":[{"id":"meta-llama/Llama-3.1-8B-Instruct","object":"model","created":1760000000,"owned_by":"sglang","root":"meta-llama/Llama-3.1-8B-Instruct","max_model_len":131072}]}"#;

    fn parse(
        family: ServerFamily,
        model: &str,
        body: &str,
    ) -> Result<Option<(String, u32)>, LlmError> {
        let config =
            ProviderConfig::new("local", Protocol::OpenAi, "http://127.0.0.1:8000/v1", model);
        let asker = Asker::new(&config, family).unwrap();
        let answer = Answer {
            status: 200,
            body: body.as_bytes().to_vec(),
            what: "GET /v1/models".into(),
        };
        parse_models(&asker, &answer, &asker.json(&answer)?)
    }

    #[test]
    fn the_configured_models_card_gives_the_window() {
        assert_eq!(
            parse(ServerFamily::Vllm, "Qwen/Qwen3-8B", VLLM).unwrap(),
            Some(("Qwen/Qwen3-8B".into(), 32768))
        );
        assert_eq!(
            parse(ServerFamily::Vllm, "sql-lora", VLLM).unwrap(),
            Some(("sql-lora".into(), 32768)),
            "a LoRA adapter has its base model's window"
        );
        assert_eq!(
            parse(
                ServerFamily::Sglang,
                "meta-llama/Llama-3.1-8B-Instruct",
                SGLANG
            )
            .unwrap(),
            Some(("meta-llama/Llama-3.1-8B-Instruct".into(), 131_072))
        );
    }

    #[test]
    fn the_only_model_stands_for_an_unknown_name_but_not_among_several() {
        assert_eq!(
            parse(ServerFamily::Sglang, "local-model", SGLANG).unwrap(),
            Some(("meta-llama/Llama-3.1-8B-Instruct".into(), 131_072))
        );
        let e = parse(ServerFamily::Vllm, "local-model", VLLM)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("Qwen/Qwen3-8B, sql-lora") && e.contains("local-model"),
            "{e}"
        );
    }

    #[test]
    fn unusable_cards_are_refused_or_unknown() {
        let e = parse(
            ServerFamily::Vllm,
            "Qwen/Qwen3-8B",
            &VLLM.replace("32768", "0"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("0 tokens") && e.contains("refused"), "{e}");
        let e = parse(
            ServerFamily::Vllm,
            "Qwen/Qwen3-8B",
            &VLLM.replace("32768", "1000000000"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("1000000000 tokens"), "{e}");
        let none = SGLANG.replace(r#","max_model_len":131072"#, "");
        assert_eq!(parse(ServerFamily::Sglang, "x", &none).unwrap(), None);
        assert!(parse(ServerFamily::Vllm, "x", r#"{"object":"list"}"#).is_err());
        assert!(parse(ServerFamily::Vllm, "x", "Internal Server Error").is_err());
    }
}
