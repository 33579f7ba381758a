//! LM Studio: its REST API, `GET /api/v0/models` (lmstudio.ai/docs/developer/rest/endpoints),
//! lists every downloaded model with `state` (`loaded` or `not-loaded`) and
//! `max_context_length`, the model's own maximum; a loaded model also has
//! `loaded_context_length`, what it was loaded with and what a request gets. LM Studio loads a
//! model on first use with its load settings, which it does not report before: a model not
//! loaded has no window to give yet.

use serde_json::Value;

use super::{Answer, Asker, Served, ServerFamily, same_model};
use crate::LlmError;

/// One model of the list.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Listed {
    pub(crate) id: String,
    pub(crate) loaded: Option<u32>,
    pub(crate) max: Option<u32>,
}

/// Asks `/api/v0/models`. Ok(None) when the model is not loaded.
pub(crate) async fn discover(asker: &Asker<'_>) -> Result<Option<Served>, LlmError> {
    let answer = asker
        .get(&format!("{}/api/v0/models", asker.root()))
        .await?;
    let listed = parse_models(asker, &answer, &asker.json(&answer)?)?;
    let Some(window) = listed.loaded else {
        tracing::info!(
            provider = %asker.config.name,
            model = %listed.id,
            "LM Studio has not loaded the model, so it cannot say its window yet"
        );
        return Ok(None);
    };
    Ok(Some(Served {
        window,
        slots: Vec::new(),
        family: ServerFamily::LmStudio,
        model: Some(listed.id),
        model_max: listed.max,
        floor: false,
    }))
}

/// The configured model's entry, or the only loaded one when the configured name is not listed.
pub(crate) fn parse_models(
    asker: &Asker<'_>,
    answer: &Answer,
    json: &Value,
) -> Result<Listed, LlmError> {
    let models = json
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| asker.missing(answer, "data"))?;
    let loaded = |m: &&Value| m.get("state").and_then(Value::as_str) == Some("loaded");
    let wanted = asker.config.model.as_str();
    let entry = match models.iter().find(|m| same_model(id(m), wanted)) {
        Some(entry) => entry,
        None => {
            let chat: Vec<&Value> = models
                .iter()
                .filter(loaded)
                .filter(|m| m.get("type").and_then(Value::as_str) != Some("embeddings"))
                .collect();
            match chat.as_slice() {
                [only] => {
                    tracing::warn!(
                        provider = %asker.config.name,
                        configured = wanted,
                        loaded = id(only),
                        "LM Studio does not list the configured model; reading the one it has loaded"
                    );
                    *only
                }
                _ => {
                    return Err(asker.config_error(format!(
                        "LM Studio at {} has no model '{wanted}' for {} (loaded: {}); set the \
                         model to one `lms ls` shows",
                        asker.root(),
                        asker.config.name,
                        if chat.is_empty() {
                            "none".to_owned()
                        } else {
                            chat.iter().map(|m| id(m)).collect::<Vec<_>>().join(", ")
                        }
                    )));
                }
            }
        }
    };
    let number = |field: &str| match entry.get(field).filter(|v| !v.is_null()) {
        Some(n) => asker.window(n, field, &answer.what).map(Some),
        None => Ok(None),
    };
    let max = number("max_context_length")?;
    let loaded_len = if loaded(&entry) {
        number("loaded_context_length")?
    } else {
        None
    };
    Ok(Listed {
        id: id(entry).to_owned(),
        loaded: loaded_len,
        max,
    })
}

/// A listed model's id.
fn id(model: &Value) -> &str {
    model.get("id").and_then(Value::as_str).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Protocol, ProviderConfig};

    /// `GET /api/v0/models` with one model loaded: LM Studio's fields and order
    /// (lmstudio.ai/docs/developer/rest/endpoints; `loaded_context_length` as LM Studio 0.3.15
    /// sends it, zed-industries/zed#25606), indented as it writes it.
    const MODELS: &str = r#"{
  "object": "list",
  "data": [
    {
      "id": "qwen2.5-coder-7b-instruct",
      "object": "model",
      "type": "llm",
      "publisher": "lmstudio-community",
      "arch": "qwen2",
      "compatibility_type": "gguf",
      "quantization": "Q4_K_M",
      "state": "loaded",
      "max_context_length": 32768,
      "loaded_context_length": 16384
    },
    {
      "id": "meta-llama-3.1-8b-instruct",
      "object": "model",
      "type": "llm",
      "publisher": "lmstudio-community",
      "arch": "llama",
      "compatibility_type": "gguf",
      "quantization": "Q4_K_M",
      "state": "not-loaded",
      "max_context_length": 131072
    },
    {
      "id": "text-embedding-nomic-embed-text-v1.5",
      "object": "model",
      "type": "embeddings",
      "publisher": "nomic-ai",
      "arch": "nomic-bert",
      "compatibility_type": "gguf",
      "quantization": "Q4_0",
      "state": "loaded",
      "max_context_length": 2048,
      "loaded_context_length": 2048
    }
  ]
}"#;

    fn parse(model: &str, body: &str) -> Result<Listed, LlmError> {
        let config = ProviderConfig::new(
            "lmstudio",
            Protocol::OpenAi,
            "http://127.0.0.1:1234/v1",
            model,
        );
        let asker = Asker::new(&config, ServerFamily::LmStudio).unwrap();
        let answer = Answer {
            status: 200,
            body: body.as_bytes().to_vec(),
            what: "GET /api/v0/models".into(),
        };
        parse_models(&asker, &answer, &asker.json(&answer)?)
    }

    #[test]
    fn a_loaded_model_gives_its_loaded_window() {
        assert_eq!(
            parse("qwen2.5-coder-7b-instruct", MODELS).unwrap(),
            Listed {
                id: "qwen2.5-coder-7b-instruct".into(),
                loaded: Some(16384),
                max: Some(32768)
            }
        );
    }

    #[test]
    fn a_model_not_loaded_has_only_its_maximum() {
        assert_eq!(
            parse("meta-llama-3.1-8b-instruct", MODELS).unwrap(),
            Listed {
                id: "meta-llama-3.1-8b-instruct".into(),
                loaded: None,
                max: Some(131_072)
            }
        );
    }

    #[test]
    fn an_unlisted_name_reads_the_only_loaded_chat_model() {
        assert_eq!(parse("local-model", MODELS).unwrap().loaded, Some(16384));
        let two = MODELS.replace(
            r#""state": "not-loaded""#,
            r#""state": "loaded", "loaded_context_length": 4096"#,
        );
        let e = parse("local-model", &two).unwrap_err().to_string();
        assert!(
            e.contains("qwen2.5-coder-7b-instruct, meta-llama-3.1-8b-instruct"),
            "{e}"
        );
    }

    #[test]
    fn unusable_windows_are_refused() {
        let e = parse("qwen2.5-coder-7b-instruct", &MODELS.replace("16384", "0"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("0 tokens") && e.contains("refused"), "{e}");
        let e = parse(
            "qwen2.5-coder-7b-instruct",
            &MODELS.replace("16384", "1000000000"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("1000000000 tokens"), "{e}");
        assert!(parse("x", r#"{"models":[]}"#).is_err());
    }
}
