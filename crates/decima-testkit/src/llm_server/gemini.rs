//! The request check of Gemini's OpenAI-compatible endpoint that decides whether tool calling
//! works across steps: Gemini 3 wants back, on the first call of every step of the current turn,
//! the `thought_signature` it sent with that call, and refuses the request with a 400 otherwise
//! (ai.google.dev/gemini-api/docs/thought-signatures; the error as users met it:
//! discuss.ai.google.dev/t/109823).

use serde_json::Value;

use super::{RecordedRequest, Reply};

/// The signatures the test server hands out with Gemini's quirks (`c2lnbmF0dXJl` is base64 for
/// "signature"), which is what this check accepts back, besides Google's documented stand-in.
const ISSUED_PREFIX: &str = "c2lnbmF0dXJl";

/// The value Google's guide gives for calls Gemini did not write, which passes the check.
const STAND_IN: &str = "skip_thought_signature_validator";

/// Gemini's answer to a request, if it refuses it: a 400 in the endpoint's own shape (an array
/// holding one Google error) when a step of the current turn (the assistant messages after the
/// last user message) sends back its first call without a signature this server issued. Calls of
/// earlier turns are not checked, as Gemini does not check them. For [`super::LlmServer::refuse_with`].
pub fn refuses_unsigned_calls(request: &RecordedRequest) -> Option<Reply> {
    let messages = request.json.as_ref()?.get("messages")?.as_array()?;
    let turn_start = messages
        .iter()
        .rposition(|m| m["role"] == "user")
        .map_or(0, |last| last + 1);
    for (position, message) in messages.iter().enumerate().skip(turn_start) {
        let Some(first) = message["tool_calls"].as_array().and_then(|c| c.first()) else {
            continue;
        };
        let signature = first
            .pointer("/extra_content/google/thought_signature")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if signature.starts_with(ISSUED_PREFIX) || signature == STAND_IN {
            continue;
        }
        let name = first["function"]["name"].as_str().unwrap_or_default();
        let problem = if signature.is_empty() {
            "Function call is missing a thought_signature in functionCall parts. This is required \
             for tools to work correctly, and missing thought_signature may lead to degraded \
             model performance."
        } else {
            "Corrupted thought signature."
        };
        let body = serde_json::json!([{
            "error": {
                "code": 400,
                "message": format!(
                    "{problem} Additional data, function call `default_api:{name}` , position \
                     {position}. Please refer to \
                     https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
                ),
                "status": "INVALID_ARGUMENT"
            }
        }]);
        return Some(Reply::Status {
            status: 400,
            headers: Vec::new(),
            body: body.to_string(),
        });
    }
    None
}
