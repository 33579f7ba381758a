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
}

/// Collects tool-call deltas keyed by their stream index, in first-seen order.
#[derive(Debug, Default)]
pub struct ToolCallAssembler {
    calls: Vec<(u64, PartialToolCall)>,
}

impl ToolCallAssembler {
    /// Applies one delta: any of id, name and argument text may be present.
    pub fn apply(
        &mut self,
        index: u64,
        id: Option<&str>,
        name: Option<&str>,
        arguments: Option<&str>,
    ) {
        let position = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(p) => p,
            None => {
                self.calls.push((index, PartialToolCall::default()));
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[position].1;
        if let Some(id) = id.filter(|s| !s.is_empty()) {
            call.id = id.to_string();
        }
        if let Some(name) = name {
            call.name.push_str(name);
        }
        if let Some(arguments) = arguments {
            call.arguments.push_str(arguments);
        }
    }

    /// True when nothing was collected.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Finishes every call: validated, repaired where possible, in stream order.
    pub fn finish(&mut self) -> Result<Vec<ToolCall>, LlmError> {
        std::mem::take(&mut self.calls)
            .into_iter()
            .map(|(_, call)| finish_call(call))
            .collect()
    }
}

/// Validates one assembled call.
pub fn finish_call(call: PartialToolCall) -> Result<ToolCall, LlmError> {
    if call.name.is_empty() {
        return Err(LlmError::InvalidToolArguments {
            tool: "(unnamed)".into(),
            detail: "the tool call has no function name".into(),
        });
    }
    let arguments =
        valid_json_arguments(&call.arguments).map_err(|detail| LlmError::InvalidToolArguments {
            tool: call.name.clone(),
            detail,
        })?;
    Ok(ToolCall {
        id: call.id,
        name: call.name,
        arguments,
    })
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
    fn hopeless_arguments_are_a_logic_error() {
        let mut a = ToolCallAssembler::default();
        a.apply(0, Some("call_1"), Some("shell"), Some("{cmd: ls}"));
        let err = a.finish().unwrap_err();
        assert_eq!(err.class(), decima_core::FailureClass::Logic);
        assert!(err.to_string().contains("shell"), "{err}");
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
