//! Tool calls arrive in pieces: an id and a name, then argument text split anywhere. This module
//! reassembles them and checks that the arguments are JSON, repairing the common slips.

use decima_core::ToolCall;
use serde_json::Value;

use crate::LlmError;

/// A tool call being streamed.
#[derive(Debug, Clone, Default)]
pub struct PartialToolCall {
    /// The provider's call id (may arrive after the first delta on some servers).
    pub id: String,
    /// The tool name (may arrive in pieces on some servers).
    pub name: String,
    /// The argument text so far.
    pub arguments: String,
    /// The provider's opaque token for the call (Gemini's `thought_signature`), kept to send back.
    pub signature: Option<String>,
}

/// One tool-call delta as an OpenAI-compatible server sends it. Any part may be missing: servers
/// disagree on which deltas carry the index, the id and the name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolCallDelta<'a> {
    /// The call's position in the answer; missing on Gemini's OpenAI endpoint, shared by every
    /// call on Ollama.
    pub index: Option<u64>,
    /// The call id; missing on vLLM, empty on some argument deltas, repeated on others.
    pub id: Option<&'a str>,
    /// The function name; repeated or empty on some argument deltas.
    pub name: Option<&'a str>,
    /// A piece of the argument text.
    pub arguments: Option<&'a str>,
    /// Gemini's `extra_content.google.thought_signature`: on the call's first delta, or alone in
    /// a delta after its arguments.
    pub signature: Option<&'a str>,
}

/// A call being assembled, with the index its deltas carry (None when they carry none).
#[derive(Debug, Clone, Default)]
struct Slot {
    index: Option<u64>,
    call: PartialToolCall,
}

/// Collects tool-call deltas into calls, in first-seen order. A delta belongs to the call with its
/// id; failing that, to the latest call at its index (the latest call at all when it has no
/// index), unless it opens a different call there: a different id, or another name, or the same
/// name after complete arguments. Servers that give every call index 0, send no index, or no id,
/// are so read as OpenAI's are.
#[derive(Debug, Default)]
pub struct ToolCallAssembler {
    calls: Vec<Slot>,
}

impl ToolCallAssembler {
    /// Applies one delta at a known index: any of id, name and argument text may be present.
    pub fn apply(
        &mut self,
        index: u64,
        id: Option<&str>,
        name: Option<&str>,
        arguments: Option<&str>,
    ) {
        self.apply_delta(ToolCallDelta {
            index: Some(index),
            id,
            name,
            arguments,
            signature: None,
        });
    }

    /// Applies one delta. Empty ids and names count as absent; a delta with only a signature
    /// gives it to the call it continues, and a delta with nothing changes nothing; argument text
    /// that repeats a call's complete arguments (LiteLLM's summary chunk, even JSON-encoded twice)
    /// is dropped.
    pub fn apply_delta(&mut self, delta: ToolCallDelta<'_>) {
        let id = delta.id.filter(|s| !s.is_empty());
        let name = delta.name.filter(|s| !s.is_empty());
        let arguments = delta.arguments.filter(|s| !s.is_empty());
        let signature = delta.signature.filter(|s| !s.is_empty());
        if id.is_none() && name.is_none() && arguments.is_none() {
            if let Some(signature) = signature
                && let Some(position) = self.target(delta.index, None, None, None)
            {
                let call = &mut self.calls[position].call;
                call.signature.get_or_insert_with(|| signature.to_owned());
            }
            return;
        }
        let position = match self.target(delta.index, id, name, arguments) {
            Some(position) => position,
            None => {
                self.calls.push(Slot {
                    index: delta.index,
                    call: PartialToolCall::default(),
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[position].call;
        if let Some(id) = id
            && call.id.is_empty()
        {
            call.id = id.to_string();
        }
        if let Some(name) = name
            && call.name.is_empty()
        {
            call.name = name.to_string();
        }
        if let Some(arguments) = arguments
            && !repeats(&call.arguments, arguments)
        {
            call.arguments.push_str(arguments);
        }
        if let Some(signature) = signature {
            call.signature.get_or_insert_with(|| signature.to_owned());
        }
    }

    /// The call a delta continues, or None when it opens a new one.
    fn target(
        &self,
        index: Option<u64>,
        id: Option<&str>,
        name: Option<&str>,
        arguments: Option<&str>,
    ) -> Option<usize> {
        if let Some(id) = id
            && let Some(position) = self.calls.iter().rposition(|s| s.call.id == id)
        {
            return Some(position);
        }
        let position = match index {
            Some(index) => self.calls.iter().rposition(|s| s.index == Some(index))?,
            None => self.calls.len().checked_sub(1)?,
        };
        let call = &self.calls[position].call;
        if id.is_some()
            && !call.id.is_empty()
            && (name.is_some() || is_complete_json(&call.arguments))
        {
            // Another id at the same index (or without one) that opens a call: another call. An
            // argument delta with a fresh id for an unfinished call stays with it (servers that
            // changed ids per delta, cubist38/mlx-openai-server#216).
            return None;
        }
        if let Some(name) = name
            && !call.name.is_empty()
        {
            let another_name = name != call.name;
            let after_complete = is_complete_json(&call.arguments)
                && !arguments.is_some_and(|a| repeats(&call.arguments, a));
            if another_name || after_complete {
                return None;
            }
        }
        Some(position)
    }

    /// True when nothing was collected.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Takes every call as assembled, in stream order, without checking anything.
    pub fn take(&mut self) -> Vec<PartialToolCall> {
        std::mem::take(&mut self.calls)
            .into_iter()
            .map(|slot| slot.call)
            .collect()
    }

    /// Finishes every call: validated, repaired where possible, in stream order.
    pub fn finish(&mut self) -> Result<Vec<ToolCall>, LlmError> {
        self.take().into_iter().map(finish_call).collect()
    }
}

/// Whether `text` is one complete JSON value.
fn is_complete_json(text: &str) -> bool {
    !text.trim().is_empty() && serde_json::from_str::<Value>(text).is_ok()
}

/// Whether `piece` repeats the complete arguments `so_far`, as such or JSON-encoded once more.
/// Cheap on the usual path: only a piece that starts a value after a closed value is parsed.
fn repeats(so_far: &str, piece: &str) -> bool {
    let so_far = so_far.trim();
    let piece = piece.trim();
    if !(so_far.ends_with('}') || so_far.ends_with(']'))
        || !(piece.starts_with('{') || piece.starts_with('[') || piece.starts_with('"'))
    {
        return false;
    }
    let (Ok(whole), Ok(again)) = (
        serde_json::from_str::<Value>(so_far),
        serde_json::from_str::<Value>(piece),
    ) else {
        return false;
    };
    match again {
        Value::String(encoded) => serde_json::from_str::<Value>(&encoded).is_ok_and(|v| v == whole),
        again => again == whole,
    }
}

/// A call id for a call the server sent without one: `call_<n>_<hash>`, where n is the call's
/// position in the answer and the hash (FNV-1a, fixed forever) covers the response id, the name
/// and the arguments. The same bytes always give the same id; ids differ within an answer (by n)
/// and across answers (by the response id), so a generated id never pairs with a stranger's result.
pub fn generated_call_id(response_id: &str, n: usize, name: &str, arguments: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in [response_id, name, arguments] {
        for byte in part.bytes().chain(std::iter::once(0xff)) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("call_{n}_{:012x}", hash & 0xffff_ffff_ffff)
}

/// The key under which [`finish_call`] keeps arguments that are not JSON and cannot be
/// repaired: `{"__invalid_arguments__": RAW, "__parse_error__": WHY}`.
pub const INVALID_ARGUMENTS_KEY: &str = "__invalid_arguments__";
/// The parse error kept with them.
pub const PARSE_ERROR_KEY: &str = "__parse_error__";

/// The events that close an answer of an OpenAI-style wire (OpenAI-compatible and Ollama):
/// its calls (ids generated from `seed` where the server sent none; cut off, never run, when
/// the output limit ended the answer), the finish reason, then the usage.
pub(crate) fn closing_events(
    calls: Vec<PartialToolCall>,
    finish: crate::FinishReason,
    seed: &str,
    usage: Option<crate::Usage>,
) -> Result<Vec<crate::StreamEvent>, LlmError> {
    use crate::{CutOffToolCall, FinishReason, StreamEvent};
    let mut events = Vec::with_capacity(calls.len() + 2);
    for (n, mut call) in calls.into_iter().enumerate() {
        if call.id.is_empty() {
            call.id = generated_call_id(seed, n, &call.name, &call.arguments);
        }
        events.push(if finish == FinishReason::Length {
            StreamEvent::ToolCallCutOff(CutOffToolCall {
                id: call.id,
                name: call.name,
                arguments: call.arguments,
            })
        } else {
            StreamEvent::ToolCall(finish_call(call)?)
        });
    }
    events.push(StreamEvent::Finish(finish));
    if let Some(usage) = usage {
        events.push(StreamEvent::Usage(usage));
    }
    Ok(events)
}

/// Validates one assembled call. Arguments that stay invalid JSON after repair keep the call:
/// they are wrapped as a JSON object under [`INVALID_ARGUMENTS_KEY`], so the call can be stored
/// and sent back (every provider needs JSON there) and answered with a tool error the model can
/// correct, instead of losing the whole answer. See [`invalid_arguments`].
pub fn finish_call(call: PartialToolCall) -> Result<ToolCall, LlmError> {
    if call.name.is_empty() {
        return Err(LlmError::InvalidToolArguments {
            tool: "(unnamed)".into(),
            detail: "the tool call has no function name".into(),
        });
    }
    let arguments = match valid_json_arguments(&call.arguments) {
        Ok(arguments) => arguments,
        Err(detail) => serde_json::json!({
            INVALID_ARGUMENTS_KEY: call.arguments,
            PARSE_ERROR_KEY: detail,
        })
        .to_string(),
    };
    Ok(ToolCall {
        id: call.id,
        name: call.name,
        arguments,
        signature: call.signature,
    })
}

/// The raw text and parse error of arguments [`finish_call`] could not make JSON of, if these
/// are such arguments.
pub fn invalid_arguments(arguments: &str) -> Option<(String, String)> {
    if !arguments.contains(INVALID_ARGUMENTS_KEY) {
        return None;
    }
    let value: Value = serde_json::from_str(arguments).ok()?;
    let raw = value.get(INVALID_ARGUMENTS_KEY)?.as_str()?.to_owned();
    let why = value
        .get(PARSE_ERROR_KEY)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    Some((raw, why))
}

/// Returns the arguments as valid JSON text: unchanged when they parse, repaired when a common slip
/// explains the failure (empty text, a Markdown fence, unclosed brackets or strings, a trailing
/// comma), else the parse error.
pub fn valid_json_arguments(text: &str) -> Result<String, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok("{}".into());
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(_) => Ok(text.to_string()),
        Err(first) => {
            let repaired = repair(trimmed);
            match serde_json::from_str::<Value>(&repaired) {
                Ok(_) => Ok(repaired),
                Err(_) => Err(first.to_string()),
            }
        }
    }
}

fn repair(text: &str) -> String {
    let mut s = text.trim();
    if let Some(rest) = s.strip_prefix("```json").or_else(|| s.strip_prefix("```")) {
        s = rest.trim_end().trim_end_matches("```").trim();
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut stack = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in s.chars() {
        out.push(c);
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                stack.pop();
            }
            _ => {}
        }
    }
    if in_string {
        out.push('"');
    }
    while let Some(close) = stack.pop() {
        let trimmed_len = out.trim_end().trim_end_matches(',').len();
        out.truncate(trimmed_len);
        out.push(close);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn valid_arguments_pass_unchanged() {
        assert_eq!(valid_json_arguments(r#"{"a": 1}"#).unwrap(), r#"{"a": 1}"#);
        assert_eq!(valid_json_arguments("").unwrap(), "{}");
    }

    #[test]
    fn common_slips_are_repaired() {
        assert_eq!(
            valid_json_arguments("```json\n{\"a\":1}\n```").unwrap(),
            "{\"a\":1}"
        );
        assert_eq!(
            valid_json_arguments(r#"{"cmd":"ls"#).unwrap(),
            r#"{"cmd":"ls"}"#
        );
        assert_eq!(
            valid_json_arguments(r#"{"a":[1,2,"#).unwrap(),
            r#"{"a":[1,2]}"#
        );
    }

    #[test]
    fn hopeless_arguments_keep_the_call_with_the_raw_text_and_the_error() {
        let mut a = ToolCallAssembler::default();
        a.apply(0, Some("call_1"), Some("shell"), Some("{cmd: ls}"));
        let calls = a.finish().unwrap();
        assert_eq!(calls[0].name, "shell");
        let (raw, why) = invalid_arguments(&calls[0].arguments).unwrap();
        assert_eq!(raw, "{cmd: ls}");
        assert!(why.contains("key must be a string"), "{why}");
        assert!(serde_json::from_str::<Value>(&calls[0].arguments).is_ok());
        assert_eq!(invalid_arguments(r#"{"cmd":"ls"}"#), None);
    }

    #[test]
    fn a_call_without_a_name_is_a_logic_error() {
        let mut a = ToolCallAssembler::default();
        a.apply(0, Some("call_1"), None, Some("{}"));
        let err = a.finish().unwrap_err();
        assert_eq!(err.class(), decima_core::FailureClass::Logic);
    }

    fn delta<'a>(
        index: Option<u64>,
        id: Option<&'a str>,
        name: Option<&'a str>,
        arguments: Option<&'a str>,
    ) -> ToolCallDelta<'a> {
        ToolCallDelta {
            index,
            id,
            name,
            arguments,
            signature: None,
        }
    }

    #[test]
    fn a_signature_stays_with_its_call_whether_it_opens_the_call_or_follows_it() {
        // Gemini: no indexes; the first call signed on its opening delta, the second by a
        // metadata-only delta after its arguments; a repeat of the signature changes nothing.
        let mut a = ToolCallAssembler::default();
        a.apply_delta(ToolCallDelta {
            signature: Some("sig-a"),
            ..delta(None, Some("call_a"), Some("shell"), Some(""))
        });
        a.apply_delta(delta(None, Some(""), None, Some(r#"{"command":"ls"}"#)));
        a.apply_delta(ToolCallDelta {
            signature: Some("sig-a2"),
            ..delta(None, None, None, None)
        });
        a.apply_delta(delta(None, Some("call_b"), Some("read_file"), Some("{}")));
        a.apply_delta(ToolCallDelta {
            signature: Some("sig-b"),
            ..delta(None, None, None, None)
        });
        let calls = a.finish().unwrap();
        let signatures: Vec<_> = calls.iter().map(|c| c.signature.as_deref()).collect();
        assert_eq!(signatures, [Some("sig-a"), Some("sig-b")]);
        assert_eq!(calls[0].arguments, r#"{"command":"ls"}"#);

        // A signature before any call has nowhere to go.
        let mut a = ToolCallAssembler::default();
        a.apply_delta(ToolCallDelta {
            signature: Some("stray"),
            ..delta(Some(0), None, None, None)
        });
        assert!(a.is_empty());
    }

    fn assembled(deltas: &[ToolCallDelta<'_>]) -> Vec<(String, String, String)> {
        let mut a = ToolCallAssembler::default();
        for d in deltas {
            a.apply_delta(*d);
        }
        a.take()
            .into_iter()
            .map(|c| (c.id, c.name, c.arguments))
            .collect()
    }

    fn call(id: &str, name: &str, arguments: &str) -> (String, String, String) {
        (id.into(), name.into(), arguments.into())
    }

    #[test]
    fn calls_sharing_index_zero_are_told_apart_by_id() {
        let calls = assembled(&[
            delta(Some(0), Some("a"), Some("shell"), Some("")),
            delta(Some(0), None, None, Some(r#"{"cmd":"ls"}"#)),
            delta(Some(0), Some("b"), Some("read_file"), Some("")),
            delta(Some(0), None, None, Some(r#"{"path":"x"}"#)),
        ]);
        assert_eq!(
            calls,
            [
                call("a", "shell", r#"{"cmd":"ls"}"#),
                call("b", "read_file", r#"{"path":"x"}"#)
            ]
        );
    }

    #[test]
    fn without_index_or_id_each_name_opens_a_call() {
        let calls = assembled(&[
            delta(None, None, Some("shell"), Some(r#"{"cmd":"#)),
            delta(None, Some(""), None, Some(r#""ls"}"#)),
            // Gemini's metadata-only delta: nothing to apply.
            delta(None, None, None, None),
            delta(None, None, Some("shell"), Some(r#"{"cmd":"pwd"}"#)),
            delta(None, None, Some("read_file"), Some("{}")),
        ]);
        assert_eq!(
            calls,
            [
                call("", "shell", r#"{"cmd":"ls"}"#),
                call("", "shell", r#"{"cmd":"pwd"}"#),
                call("", "read_file", "{}")
            ]
        );
    }

    #[test]
    fn repeated_ids_names_and_summaries_are_not_appended() {
        let calls = assembled(&[
            delta(Some(0), Some("a"), Some("shell"), Some(r#"{"cmd":"#)),
            // LiteLLM: id and name again on argument deltas.
            delta(Some(0), Some("a"), Some("shell"), Some(r#""ls"}"#)),
            // LiteLLM's summary chunk: the whole arguments again, JSON-encoded twice.
            delta(
                Some(0),
                Some("a"),
                Some("shell"),
                Some(r#""{\"cmd\":\"ls\"}""#),
            ),
            // ... or as they are.
            delta(Some(0), Some("a"), None, Some(r#"{"cmd": "ls"}"#)),
            // LM Studio: an empty name on argument deltas.
            delta(Some(1), Some("b"), Some("read_file"), Some("")),
            delta(Some(1), None, Some(""), Some("{}")),
        ]);
        assert_eq!(
            calls,
            [
                call("a", "shell", r#"{"cmd":"ls"}"#),
                call("b", "read_file", "{}")
            ]
        );
    }

    #[test]
    fn a_fresh_id_on_an_argument_delta_continues_the_unfinished_call() {
        let calls = assembled(&[
            delta(Some(0), Some("a1"), Some("shell"), Some(r#"{"cmd":"#)),
            delta(Some(0), Some("a2"), None, Some(r#""ls"}"#)),
        ]);
        assert_eq!(calls, [call("a1", "shell", r#"{"cmd":"ls"}"#)]);
    }

    #[test]
    fn generated_ids_are_fixed_forever_and_distinct() {
        // Pinned: stored conversations refer to these ids.
        assert_eq!(
            generated_call_id("chatcmpl-1", 0, "shell", "{}"),
            generated_call_id("chatcmpl-1", 0, "shell", "{}")
        );
        let id = generated_call_id("chatcmpl-1", 0, "shell", "{}");
        assert!(
            id.starts_with("call_0_") && id.len() == "call_0_".len() + 12,
            "{id}"
        );
        assert_ne!(id, generated_call_id("chatcmpl-2", 0, "shell", "{}"));
        assert_ne!(id, generated_call_id("chatcmpl-1", 1, "shell", "{}"));
        assert_ne!(id, generated_call_id("chatcmpl-1", 0, "shell", "{ }"));
        assert!(
            id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "usable as an Anthropic tool_use id too: {id}"
        );
    }

    proptest! {
        /// Tool-call deltas split at arbitrary points, interleaved across calls, reassemble exactly.
        #[test]
        fn deltas_split_anywhere_reassemble(
            args in proptest::collection::vec("[a-z0-9 ]{0,12}", 1..4),
            cuts in proptest::collection::vec(0usize..64, 0..8),
        ) {
            let calls: Vec<(String, String, String)> = args
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("call_{i}"), format!("tool_{i}"), serde_json::json!({ "value": v, "n": i }).to_string()))
                .collect();
            // Split each call's arguments at the given cut points, then interleave the pieces.
            let mut pieces: Vec<Vec<String>> = calls.iter().map(|(_, _, a)| {
                let mut points: Vec<usize> = cuts.iter().map(|c| c % (a.len() + 1)).collect();
                points.sort_unstable();
                points.dedup();
                let mut out = Vec::new();
                let mut last = 0;
                for p in points.into_iter().chain(std::iter::once(a.len())) {
                    if p >= last && a.is_char_boundary(p) {
                        out.push(a[last..p].to_string());
                        last = p;
                    }
                }
                out
            }).collect();
            let mut assembler = ToolCallAssembler::default();
            for (i, (id, name, _)) in calls.iter().enumerate() {
                assembler.apply(i as u64, Some(id), Some(name), None);
            }
            let mut round = 0;
            while pieces.iter().any(|p| round < p.len()) {
                for (i, p) in pieces.iter_mut().enumerate() {
                    if let Some(piece) = p.get(round) {
                        assembler.apply(i as u64, None, None, Some(piece));
                    }
                }
                round += 1;
            }
            let done = assembler.finish().unwrap();
            prop_assert_eq!(done.len(), calls.len());
            for (call, (id, name, arguments)) in done.iter().zip(&calls) {
                prop_assert_eq!(&call.id, id);
                prop_assert_eq!(&call.name, name);
                prop_assert_eq!(&call.arguments, arguments);
            }
        }
    }
}
