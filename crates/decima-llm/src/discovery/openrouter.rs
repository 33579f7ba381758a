//! OpenRouter: `GET /api/v1/models` (openrouter.ai/docs/models) lists every model with
//! `context_length`, the most any of its providers takes (OpenRouter routes a request to one that
//! fits it), and `top_provider.context_length`, the default provider's.

use serde_json::Value;

use super::{Answer, Asker, Served, ServerFamily};
use crate::LlmError;

/// Asks the model list. Ok(None) when the model is not in it or has no length.
pub(crate) async fn discover(asker: &Asker<'_>) -> Result<Option<Served>, LlmError> {
    let answer = asker.get(&format!("{}/models", asker.base())).await?;
    let Some((model, window)) = parse_models(asker, &answer, &asker.json(&answer)?)? else {
        tracing::info!(
            provider = %asker.config.name,
            model = %asker.config.model,
            "OpenRouter's model list does not give this model's window"
        );
        return Ok(None);
    };
    Ok(Some(Served {
        window,
        slots: Vec::new(),
        family: ServerFamily::OpenRouter,
        model: Some(model),
        model_max: Some(window),
        floor: false,
    }))
}

/// The configured model's id and window, matched on `id` or `canonical_slug`.
pub(crate) fn parse_models(
    asker: &Asker<'_>,
    answer: &Answer,
    json: &Value,
) -> Result<Option<(String, u32)>, LlmError> {
    let models = json
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| asker.missing(answer, "data"))?;
    let wanted = asker.config.model.as_str();
    let Some(entry) = models.iter().find(|m| {
        ["id", "canonical_slug"]
            .iter()
            .any(|key| m.get(*key).and_then(Value::as_str) == Some(wanted))
    }) else {
        return Ok(None);
    };
    let id = entry
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or(wanted)
        .to_owned();
    let length = [
        ("context_length", entry.get("context_length")),
        (
            "top_provider.context_length",
            entry.pointer("/top_provider/context_length"),
        ),
    ]
    .into_iter()
    .find_map(|(field, value)| value.filter(|v| !v.is_null()).map(|v| (field, v)));
    match length {
        Some((field, value)) => Ok(Some((id, asker.window(value, field, &answer.what)?))),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Protocol, ProviderConfig};

    /// Two entries of `GET /api/v1/models`, in OpenRouter's field order.
    const MODELS: &str = r#"{"data":[{"id":"openai/gpt-4.1","canonical_slug":"openai/gpt-4.1-2025-04-14","hugging_face_id":"","name":"OpenAI: GPT-4.1","created":1744651385,"description":"GPT-4.1 is a flagship large language model.","context_length":1047576,"architecture":{"modality":"text+image->text","input_modalities":["image","text","file"],"output_modalities":["text"],"tokenizer":"GPT","instruct_type":null},"pricing":{"prompt":"0.000002","completion":"0.000008","request":"0","image":"0","web_search":"0.01","internal_reasoning":"0","input_cache_read":"0.0000005"},"top_provider":{"context_length":1047576,"max_completion_tokens":32768,"is_moderated":true},"per_request_limits":null,"supported_parameters":["max_tokens","response_format","structured_outputs","temperature","tool_choice","tools"],"default_parameters":{}},{"id":"meta-llama/llama-3.1-8b-instruct","canonical_slug":"meta-llama/llama-3.1-8b-instruct","hugging_face_id":"meta-llama/Meta-Llama-3.1-8B-Instruct","name":"Meta: Llama 3.1 8B Instruct","created":1721692800,"description":"Meta's latest class of model.","context_length":null,"architecture":{"modality":"text->text","input_modalities":["text"],"output_modalities":["text"],"tokenizer":"Llama3","instruct_type":"llama3"},"pricing":{"prompt":"0.00000002","completion":"0.00000003","request":"0","image":"0","web_search":"0","internal_reasoning":"0"},"top_provider":{"context_length":16384,"max_completion_tokens":16384,"is_moderated":false},"per_request_limits":null,"supported_parameters":["max_tokens","temperature","tools"],"default_parameters":{}}]}"#;

    fn parse(model: &str, body: &str) -> Result<Option<(String, u32)>, LlmError> {
        let config = ProviderConfig::new(
            "openrouter",
            Protocol::OpenAi,
            "https://openrouter.ai/api/v1",
            model,
        );
        let asker = Asker::new(&config, ServerFamily::OpenRouter).unwrap();
        let answer = Answer {
            status: 200,
            body: body.as_bytes().to_vec(),
            what: "GET /api/v1/models".into(),
        };
        parse_models(&asker, &answer, &asker.json(&answer)?)
    }

    #[test]
    fn the_models_context_length_is_its_window() {
        assert_eq!(
            parse("openai/gpt-4.1", MODELS).unwrap(),
            Some(("openai/gpt-4.1".into(), 1_047_576))
        );
        assert_eq!(
            parse("openai/gpt-4.1-2025-04-14", MODELS).unwrap(),
            Some(("openai/gpt-4.1".into(), 1_047_576))
        );
        assert_eq!(
            parse("meta-llama/llama-3.1-8b-instruct", MODELS).unwrap(),
            Some(("meta-llama/llama-3.1-8b-instruct".into(), 16384)),
            "without its own length, the top provider's"
        );
    }

    #[test]
    fn a_model_missing_from_the_list_has_no_window() {
        assert_eq!(parse("nobody/nothing", MODELS).unwrap(), None);
        let bare = r#"{"data":[{"id":"a/b","context_length":null,"top_provider":{"context_length":null}}]}"#;
        assert_eq!(parse("a/b", bare).unwrap(), None);
    }

    #[test]
    fn unusable_lists_are_errors() {
        assert!(parse("openai/gpt-4.1", &MODELS.replace("1047576", "0")).is_err());
        assert!(parse("openai/gpt-4.1", r#"{"error":{"message":"x"}}"#).is_err());
        assert!(parse("openai/gpt-4.1", "<!DOCTYPE html>").is_err());
    }
}
