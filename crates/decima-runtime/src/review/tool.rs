//! The `tenth_man_review` tool: its schema, reading a call's arguments, and the tool the
//! registry runs, which supplies the conversation and the execution (the model never names
//! one).

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ReviewMode, ReviewType, TENTH_MAN_REVIEW};

/// Messages a `recent_messages` review reads when the call gives no count.
pub const DEFAULT_RECENT: u32 = 20;

/// The tool's schema, as offered to the model.
pub fn tenth_man_review_schema() -> Value {
    json!({
        "name": TENTH_MAN_REVIEW,
        "description": "Ask the tenth man, an adversarial reviewer, to read your history (summaries, tool calls and results, reasoning) and argue against your current conclusion before you rely on it. Returns the risk level, and findings that cite the message seqs they rest on. Call it before you commit to a conclusion that matters.",
        "parameters": {
            "type": "object",
            "properties": {
                "review_mode": {
                    "type": "string",
                    "enum": ["full_history", "recent_messages", "specific_content"],
                    "description": "What to review: the whole history (default), the last `count` messages, or the given `content`."
                },
                "count": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "For recent_messages: how many of the last messages (default 20)."
                },
                "content": {
                    "type": "string",
                    "description": "For specific_content: the text to review (a draft conclusion, a plan)."
                },
                "review_type": {
                    "type": "string",
                    "enum": ["quick", "full"],
                    "description": "quick: a fast risk check; full (default): a complete critique."
                },
                "focus_area": {
                    "type": "string",
                    "description": "What the reviewer should look at hardest."
                }
            },
            "additionalProperties": false
        }
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    review_mode: Option<String>,
    count: Option<u32>,
    content: Option<String>,
    review_type: Option<String>,
    focus_area: Option<String>,
}

/// A parsed call: mode, type and focus. An error is a message for the model.
pub fn parse_call(arguments: &str) -> Result<(ReviewMode, ReviewType, Option<String>), String> {
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let args: Arguments = serde_json::from_str(text)
        .map_err(|e| format!("the arguments of tenth_man_review are not valid: {e}"))?;
    let mode = match args.review_mode.as_deref().unwrap_or("full_history") {
        "full_history" => ReviewMode::FullHistory,
        "recent_messages" => ReviewMode::RecentMessages {
            count: args.count.unwrap_or(DEFAULT_RECENT).max(1),
        },
        "specific_content" => match args.content {
            Some(content) if !content.trim().is_empty() => ReviewMode::SpecificContent { content },
            _ => return Err("specific_content needs the text to review in `content`".into()),
        },
        other => {
            return Err(format!(
                "review_mode {other:?} is not one of full_history, recent_messages, specific_content"
            ));
        }
    };
    let review_type = match args.review_type.as_deref() {
        None => ReviewType::Full,
        Some(t) => match ReviewType::parse(t).map_err(|e| e.to_string())? {
            // The analyst's review of a finished run's figures, never the agent's own tool.
            ReviewType::Recompute => {
                return Err("review_type recompute is the analyst's review of a finished run's                             figures; use quick or full"
                    .into());
            }
            other => other,
        },
    };
    Ok((
        mode,
        review_type,
        args.focus_area.filter(|f| !f.trim().is_empty()),
    ))
}

/// `tenth_man_review` in a run's registry: the review is stored whole, the model gets a digest.
pub struct TenthManTool<'a> {
    /// The store.
    pub store: &'a decima_store::Store,
    /// The data directory (keys).
    pub data_dir: &'a std::path::Path,
    /// Where progress goes.
    pub events: &'a dyn crate::EventSink,
    /// The agent's provider, the last fallback for the reviewer.
    pub agent_provider: Option<String>,
    /// The run's conversation.
    pub conversation: decima_core::ConversationId,
    /// The run's execution.
    pub execution: decima_core::ExecutionId,
    /// The reviewer's provider, when the run names one.
    pub reviewer: Option<String>,
}

impl crate::tools::AgentTool for TenthManTool<'_> {
    fn spec(&self) -> decima_llm::ToolSpec {
        let schema = tenth_man_review_schema();
        decima_llm::ToolSpec {
            name: TENTH_MAN_REVIEW.to_owned(),
            description: schema["description"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            parameters: schema["parameters"].clone(),
        }
    }

    fn call<'a>(
        &'a self,
        call: crate::tools::ToolCallContext<'a>,
    ) -> decima_sandbox::host::BoxFuture<'a, crate::tools::ToolOutcome> {
        use crate::tools::ToolOutcome;
        use decima_core::FailureClass;
        Box::pin(async move {
            let started = std::time::Instant::now();
            let (mode, review_type, focus) = match parse_call(call.raw) {
                Ok(parsed) => parsed,
                Err(message) => {
                    return ToolOutcome::failed(FailureClass::Data, &message, started.elapsed());
                }
            };
            let request = super::ReviewRequest {
                conversation: self.conversation,
                execution: Some(self.execution),
                mode,
                review_type,
                focus,
                trigger: super::ReviewTrigger::Tool,
                reviewer: self.reviewer.clone(),
                final_review: false,
                figures: Vec::new(),
            };
            let ctx = super::ReviewContext {
                store: self.store,
                data_dir: self.data_dir,
                events: self.events,
                agent_provider: self.agent_provider.as_deref(),
            };
            match super::review_until(&ctx, request, call.cancel).await {
                Ok(outcome) => ToolOutcome::ok(
                    super::digest(&outcome.review, outcome.cached),
                    started.elapsed(),
                ),
                Err(e) => {
                    // The reviewer failing is not the agent's failure: only the store failing is.
                    let class = match &e {
                        crate::RuntimeError::Store(_) => FailureClass::System,
                        crate::RuntimeError::Llm(l) if l.class() == FailureClass::Transient => {
                            FailureClass::Transient
                        }
                        _ => FailureClass::Data,
                    };
                    ToolOutcome::failed(
                        class,
                        &format!("the review could not be made: {e}"),
                        started.elapsed(),
                    )
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_each_mode_are_read() {
        assert_eq!(
            parse_call("{}").unwrap(),
            (ReviewMode::FullHistory, ReviewType::Full, None)
        );
        assert_eq!(
            parse_call(r#"{"review_mode":"recent_messages","count":5,"review_type":"quick","focus_area":"totals"}"#).unwrap(),
            (ReviewMode::RecentMessages { count: 5 }, ReviewType::Quick, Some("totals".into()))
        );
        assert!(parse_call(r#"{"review_mode":"specific_content"}"#).is_err());
        assert!(parse_call(r#"{"execution_id":"x"}"#).is_err());
    }
}
