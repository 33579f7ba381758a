//! One figure worked out again: the reviewer's model in a loop of its own over the fresh
//! sandbox's tools (`shell`, `read_file`, `write_file`) and `report_value`, which ends it. The
//! reviewer sees the question, the figure in its sentence and the input files; it never sees
//! the agent's history, code or commands. What it ran and wrote is kept as the receipt.

use std::fmt::Write as _;
use std::sync::Arc;

use decima_core::{Role, ToolCall};
use decima_llm::{ChatMessage, ChatRequest, ProviderConfig, ToolSpec};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info};

use crate::error::{Result, RuntimeError};
use crate::events::NoEvents;
use crate::model_call::{connect, stream_answer};
use crate::tools::{Registry, ToolOutcome};

/// The tool that ends a recomputation with its value.
pub const REPORT_VALUE: &str = "report_value";
/// Requests one figure may take before the reviewer is stopped without a value.
pub const MAX_STEPS: u32 = 16;
/// The reviewer's room to answer in each request, in its tokens.
const MAX_OUTPUT: u32 = 2_048;
/// Characters of a command's output kept in the receipt.
const RECEIPT_OUTPUT_CHARS: usize = 2_000;

/// What one recomputation needs.
pub(super) struct Job<'a> {
    /// The reviewer.
    pub config: &'a ProviderConfig,
    /// The fresh sandbox's tools.
    pub registry: &'a Registry<'a>,
    /// The reviewer's instructions.
    pub system: &'a str,
    /// The question, the figure in its sentence, the input files.
    pub brief: String,
}

/// What the reviewer reached.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Recomputed {
    /// The value as it wrote it; none when it could not compute one.
    pub value: Option<String>,
    /// How it got there, or why it could not.
    pub derivation: String,
    /// Its commands and the files it wrote, in order.
    pub code: String,
    /// Requests it took.
    pub steps: u32,
}

/// `report_value`'s arguments.
#[derive(Deserialize)]
struct Report {
    #[serde(default)]
    value: Option<Value>,
    #[serde(default)]
    derivation: String,
}

/// `{name, description, parameters}` of `report_value`.
fn report_value_spec() -> ToolSpec {
    ToolSpec {
        name: REPORT_VALUE.to_owned(),
        description: "Report the value you computed for the figure, and end. Give it at full \
                      precision with its unit (a % sign, a currency), or null when the inputs \
                      cannot give it, and say in one or two sentences how you got it or why \
                      not."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "value": {
                    "type": ["string", "number", "null"],
                    "description": "The value you computed, e.g. \"3,580,245\" or \"64.8%\"; null if the inputs cannot give it."
                },
                "derivation": {
                    "type": "string",
                    "description": "How you computed it, from which files and columns, or why you could not."
                }
            },
            "required": ["value", "derivation"]
        }),
    }
}

/// Works one figure out again, unless `cancel` comes first.
pub(super) async fn recompute(job: &Job<'_>, cancel: &CancellationToken) -> Result<Recomputed> {
    let provider = connect(job.config)?;
    let mut tools = job.registry.specs();
    tools.push(report_value_spec());
    let mut messages: Vec<Arc<ChatMessage>> = vec![
        ChatMessage::new(Role::System, job.system.to_owned()).into(),
        ChatMessage::new(Role::User, job.brief.clone()).into(),
    ];
    let mut receipt = String::new();
    let mut nudged = false;
    for step in 1..=MAX_STEPS {
        let chat = ChatRequest {
            model: job.config.model.clone(),
            messages: messages.clone(),
            tools: tools.clone(),
            max_tokens: Some(MAX_OUTPUT),
            ..ChatRequest::default()
        };
        let completion = stream_answer(&provider, chat, &NoEvents, cancel).await?;
        if cancel.is_cancelled() {
            return Err(cancelled());
        }
        if completion.tool_calls.is_empty() {
            if nudged {
                return Ok(Recomputed {
                    value: None,
                    derivation: format!(
                        "the reviewer stopped without reporting a value: {}",
                        excerpt(&completion.text, 400)
                    ),
                    code: receipt,
                    steps: step,
                });
            }
            nudged = true;
            messages.push(ChatMessage::new(Role::Assistant, completion.text.clone()).into());
            messages.push(
                ChatMessage::new(
                    Role::User,
                    format!(
                        "Call {REPORT_VALUE} with the value you computed, or with null and why \
                         the inputs cannot give it."
                    ),
                )
                .into(),
            );
            continue;
        }
        let mut asked = ChatMessage::new(Role::Assistant, completion.text.clone());
        asked.tool_calls = completion.tool_calls.clone();
        messages.push(asked.into());
        for call in &completion.tool_calls {
            let text = if call.name == REPORT_VALUE {
                match read_report(&call.arguments) {
                    Ok(report) => {
                        info!(step, "the reviewer reported its value");
                        return Ok(Recomputed {
                            value: report.0,
                            derivation: report.1,
                            code: receipt,
                            steps: step,
                        });
                    }
                    Err(why) => why,
                }
            } else {
                let outcome = job
                    .registry
                    .call(&call.id, &call.name, &call.arguments, cancel)
                    .await;
                note(&mut receipt, call, &outcome);
                outcome.text
            };
            let mut result = ChatMessage::new(Role::Tool, text);
            result.tool_call_id = Some(call.id.clone());
            messages.push(result.into());
        }
        if cancel.is_cancelled() {
            return Err(cancelled());
        }
    }
    debug!("the reviewer ran out of steps");
    Ok(Recomputed {
        value: None,
        derivation: format!("the reviewer used its {MAX_STEPS} requests without reporting a value"),
        code: receipt,
        steps: MAX_STEPS,
    })
}

fn cancelled() -> RuntimeError {
    RuntimeError::Review("the recompute review was cancelled; nothing was stored".into())
}

/// The value and derivation of a `report_value` call, or what the reviewer must fix.
fn read_report(arguments: &str) -> std::result::Result<(Option<String>, String), String> {
    let report: Report = serde_json::from_str(arguments).map_err(|e| {
        format!("[tool error: data] {REPORT_VALUE} takes {{\"value\": …, \"derivation\": …}}: {e}")
    })?;
    let value = match report.value {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.trim().to_owned()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(other) => {
            return Err(format!(
                "[tool error: data] value must be a string, a number or null, not {other}"
            ));
        }
    };
    if value.as_ref().is_some_and(|v| v.chars().count() > 200) {
        return Err("[tool error: data] value is the figure alone, at most 200 characters".into());
    }
    Ok((value, excerpt(report.derivation.trim(), 2_000)))
}

/// Adds one call and what it gave to the receipt: a command with its output's beginning, a
/// file written with its content, a file read by its path.
fn note(receipt: &mut String, call: &ToolCall, outcome: &ToolOutcome) {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let field = |name: &str| args.get(name).and_then(Value::as_str).unwrap_or_default();
    match call.name.as_str() {
        "shell" => {
            let _ = writeln!(receipt, "$ {}", field("command"));
            let _ = writeln!(receipt, "{}", excerpt(&outcome.text, RECEIPT_OUTPUT_CHARS));
        }
        "write_file" => {
            let _ = writeln!(receipt, "# wrote {}:\n{}", field("path"), field("content"));
        }
        "read_file" if outcome.class.is_some() => {
            let _ = writeln!(
                receipt,
                "# read {} (not read: {})",
                field("path"),
                excerpt(&outcome.text, 200)
            );
        }
        "read_file" => {
            let _ = writeln!(receipt, "# read {}", field("path"));
        }
        other => {
            let _ = writeln!(receipt, "# {other} {}", excerpt(&call.arguments, 400));
        }
    }
}

/// The first `max` characters of `text`, marked when cut.
fn excerpt(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_takes_a_string_a_number_or_null_and_refuses_anything_else() {
        assert_eq!(
            read_report(r#"{"value": "3,580,245", "derivation": "sum of revenue"}"#).unwrap(),
            (Some("3,580,245".into()), "sum of revenue".into())
        );
        assert_eq!(
            read_report(r#"{"value": 0.648, "derivation": "cost / revenue"}"#)
                .unwrap()
                .0,
            Some("0.648".into())
        );
        assert_eq!(
            read_report(r#"{"value": null, "derivation": "no West rows"}"#).unwrap(),
            (None, "no West rows".into())
        );
        assert!(read_report(r#"{"value": [1], "derivation": ""}"#).is_err());
        assert!(read_report("not json").unwrap_err().contains(REPORT_VALUE));
    }
}
