//! Every request is checked before it is sent: each assistant tool call has its result, and
//! results follow their calls, before any other message. Providers refuse anything else
//! (OpenAI-compatible servers with a 400, Anthropic because a `tool_use` block must be answered
//! in the next user turn). A request that breaks the rule is a bug in whatever built it: it is
//! never sent, and the error names the call, so the bug is fixed at its source.

use std::collections::HashSet;

use decima_core::Role;

use crate::error::LlmError;
use crate::types::ChatRequest;

/// Checks the pairing of calls and results in `request`.
///
/// # Errors
/// [`LlmError::MalformedRequest`] naming the first call without its result, or the first result
/// without its call.
pub fn check_tool_pairing(request: &ChatRequest) -> Result<(), LlmError> {
    // The calls of the latest assistant message still waiting for their results.
    let mut open: Vec<(&str, &str)> = Vec::new();
    let mut open_at = 0usize;
    for (i, message) in request.messages.iter().enumerate() {
        match message.role {
            Role::Tool => {
                let id = message.tool_call_id.as_deref().unwrap_or_default();
                match open.iter().position(|(call, _)| *call == id) {
                    Some(at) => {
                        open.remove(at);
                    }
                    None => {
                        return Err(LlmError::MalformedRequest(format!(
                            "message {} of the request is a tool result for call {:?}, which the \
                             assistant message before it did not make (or answered already)",
                            i + 1,
                            decima_core::names::echo_untrusted(id)
                        )));
                    }
                }
            }
            role => {
                if let Some((id, name)) = open.first() {
                    return Err(unanswered(open_at, id, name, Some((i, role))));
                }
                if role == Role::Assistant {
                    let mut seen = HashSet::new();
                    for call in &message.tool_calls {
                        if !seen.insert(call.id.as_str()) {
                            return Err(LlmError::MalformedRequest(format!(
                                "message {} of the request makes two calls with the id {:?}",
                                i + 1,
                                decima_core::names::echo_untrusted(&call.id)
                            )));
                        }
                        open.push((&call.id, &call.name));
                    }
                    open_at = i;
                }
            }
        }
    }
    match open.first() {
        Some((id, name)) => Err(unanswered(open_at, id, name, None)),
        None => Ok(()),
    }
}

fn unanswered(at: usize, id: &str, name: &str, next: Option<(usize, Role)>) -> LlmError {
    let before = match next {
        Some((i, role)) => format!("before message {} ({})", i + 1, role.as_str()),
        None => "at the end of the request".to_owned(),
    };
    LlmError::MalformedRequest(format!(
        "the {} call {:?} of message {} of the request has no result {before}",
        decima_core::names::echo_untrusted(name),
        decima_core::names::echo_untrusted(id),
        at + 1
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use decima_core::{NewMessage, ToolCall};

    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "shell".into(),
            arguments: "{}".into(),
            signature: None,
        }
    }

    fn assistant(calls: &[&str]) -> NewMessage {
        let mut m = NewMessage::new(Role::Assistant, "");
        m.tool_calls = calls.iter().map(|id| call(id)).collect();
        m
    }

    fn result(id: &str) -> NewMessage {
        let mut m = NewMessage::new(Role::Tool, "ok");
        m.tool_call_id = Some(id.into());
        m
    }

    fn request(messages: Vec<NewMessage>) -> ChatRequest {
        ChatRequest {
            messages: messages.into_iter().map(Arc::new).collect(),
            ..ChatRequest::default()
        }
    }

    fn refused(messages: Vec<NewMessage>) -> String {
        match check_tool_pairing(&request(messages)) {
            Err(LlmError::MalformedRequest(why)) => why,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn answered_calls_pass_in_any_order_of_results() {
        let ok = request(vec![
            NewMessage::new(Role::System, "sys"),
            NewMessage::new(Role::User, "go"),
            assistant(&["a", "b"]),
            result("b"),
            result("a"),
            assistant(&[]),
            NewMessage::new(Role::User, "more"),
        ]);
        assert!(check_tool_pairing(&ok).is_ok());
    }

    #[test]
    fn another_runs_message_between_a_call_and_its_result_is_refused() {
        let why = refused(vec![
            NewMessage::new(Role::User, "task one"),
            assistant(&["a"]),
            NewMessage::new(Role::User, "task two"),
            result("a"),
        ]);
        assert!(
            why.contains("\"a\"") && why.contains("before message 3"),
            "{why}"
        );
    }

    #[test]
    fn a_call_left_open_at_the_end_a_stray_result_and_a_twice_answered_call_are_refused() {
        assert!(refused(vec![assistant(&["a"])]).contains("at the end"));
        assert!(refused(vec![NewMessage::new(Role::User, "x"), result("z")]).contains("\"z\""));
        assert!(refused(vec![assistant(&["a"]), result("a"), result("a")]).contains("\"a\""));
        assert!(
            refused(vec![assistant(&["a", "a"]), result("a"), result("a")]).contains("two calls")
        );
    }
}
