//! The gates every tool call of a run passes, side by side: the approval of MCP calls, then the
//! quick tenth-man review before a risky call; a call that may write to the workspace is
//! followed by what it changed there.

use super::Runner;
use crate::events::Event;
use crate::review::{self, ReviewMode, ReviewTrigger, ReviewType, is_risky};
use crate::tools::ToolOutcome;
use decima_core::{FailureClass, ToolCall};
use std::time::Instant;
use tracing::warn;

impl Runner<'_, '_> {
    /// Runs one tool call through the registry, behind the gates every call passes: the
    /// approval of MCP calls, then the risky-call review (when on). A call of a tool that can
    /// write to the workspace is followed by what it changed there.
    pub(super) async fn call_tool(&self, call: &ToolCall) -> ToolOutcome {
        if let Some(refused) = self.unapproved(call).await {
            return refused;
        }
        if let Some(held) = self.review_if_risky(call).await {
            return held;
        }
        let watched = self.registry.changes_workspace(&call.name);
        let before = if watched {
            self.listed_before().await
        } else {
            None
        };
        let outcome = self
            .registry
            .call(&call.id, &call.name, &call.arguments, &self.session.cancel)
            .await;
        if watched {
            self.with_changes(call, before, outcome).await
        } else {
            outcome
        }
    }

    /// An MCP call no rule approved and the analyst did not allow: refused as a tool error
    /// that says how to approve it (the run goes on). `None` lets the call run.
    async fn unapproved(&self, call: &ToolCall) -> Option<ToolOutcome> {
        let offered = self.mcp.resolve(&call.name)?;
        let started = Instant::now();
        if self
            .options
            .allow_tools
            .iter()
            .any(|p| crate::mcp::pattern_matches(p, &call.name))
        {
            return None;
        }
        let approvals = self.store().mcp_servers();
        match approvals
            .approved(&offered.server, &offered.tool.name, self.conversation.id)
            .await
        {
            Ok(true) => return None,
            Ok(false) => {}
            Err(e) => {
                return Some(ToolOutcome::failed(
                    FailureClass::System,
                    &format!("the approvals could not be read: {e}"),
                    started.elapsed(),
                ));
            }
        }
        let request = crate::mcp::ApprovalRequest {
            server: offered.server.clone(),
            tool: offered.tool.name.clone(),
            offered: call.name.clone(),
            arguments: call.arguments.clone(),
            read_only: offered.tool.read_only,
            destructive: offered.tool.destructive,
        };
        self.emit(Event::ApprovalAsked {
            call_id: call.id.clone(),
            server: request.server.clone(),
            tool: request.tool.clone(),
            arguments: request.arguments.clone(),
            read_only: request.read_only,
            destructive: request.destructive,
        });
        let answer = tokio::select! {
            biased;
            () = self.session.cancel.cancelled() => None,
            answer = self.session.choices.approve(&request) => answer,
        };
        let scope = match answer {
            Some(crate::mcp::Approval::Once) => return None,
            Some(crate::mcp::Approval::Conversation) => Some(self.conversation.id),
            Some(crate::mcp::Approval::Always) => None,
            Some(crate::mcp::Approval::Deny) => {
                return Some(ToolOutcome {
                    refused: true,
                    ..ToolOutcome::failed(
                        FailureClass::Permission,
                        &format!(
                            "the analyst refused this call to {}; do not call it again unless \
                             they ask for it",
                            call.name
                        ),
                        started.elapsed(),
                    )
                });
            }
            None => {
                return Some(ToolOutcome {
                    refused: true,
                    ..ToolOutcome::failed(
                        FailureClass::Permission,
                        &format!(
                            "{} needs approval, and no one could be asked. The analyst can \
                             allow it for a run with `decima run --allow-tool {}` (or a pattern \
                             such as `mcp__{}__*`), or answer the prompt of a run started on a \
                             terminal (this call, this conversation, or always); go on without \
                             it",
                            call.name, call.name, offered.server
                        ),
                        started.elapsed(),
                    )
                });
            }
        };
        if let Err(e) = approvals
            .approve(&offered.server, &offered.tool.name, scope)
            .await
        {
            warn!(error = %e, "an approval could not be stored; the call runs this once");
        }
        None
    }

    /// A quick review before a risky call. A high or critical one holds the call once: the
    /// model gets the review instead of the call's result, and the same call again runs. When
    /// the review itself fails the call runs, with a warning: the review is a safeguard, not a
    /// gate that a flaky reviewer can close.
    async fn review_if_risky(&self, call: &ToolCall) -> Option<ToolOutcome> {
        let rules = &self.options.risky_calls;
        if !rules.enabled || !self.options.tenth_man.system() {
            return None;
        }
        let arguments: serde_json::Value = serde_json::from_str(&call.arguments).ok()?;
        // Asked of the sandbox itself, only for a write that the rules would check.
        let exists = match arguments.get("path").and_then(|p| p.as_str()) {
            Some(path) if call.name == "write_file" && rules.overwrites => {
                self.registry.file_exists(path).await
            }
            _ => false,
        };
        // An MCP tool whose server says it may destroy data is risky whatever its arguments.
        let destructive = self
            .mcp
            .resolve(&call.name)
            .filter(|o| o.tool.destructive == Some(true))
            .map(|o| {
                format!(
                    "its server {} says {} may destroy data",
                    o.server, o.tool.name
                )
            });
        let reason = destructive.or_else(|| is_risky(rules, &call.name, &arguments, |_| exists))?;
        let key = (call.name.clone(), call.arguments.clone());
        if self
            .gates
            .risky_calls_held
            .lock()
            .is_ok_and(|held| held.contains(&key))
        {
            return None;
        }
        let started = Instant::now();
        let content = format!(
            "The agent is about to run this {} call, which is risky because {reason}:\n{}",
            call.name, call.arguments
        );
        let request = self.review_request(
            ReviewMode::SpecificContent { content },
            ReviewType::Quick,
            Some(
                "Is this call necessary for the task and safe? What could it destroy, \
                 overwrite or leak?"
                    .into(),
            ),
            ReviewTrigger::System,
        );
        match review::review(&self.review_ctx(), request).await {
            Ok(outcome) if outcome.review.risk_level.contests() => {
                if let Ok(mut held) = self.gates.risky_calls_held.lock() {
                    held.insert(key);
                }
                Some(ToolOutcome::ok(
                    format!(
                        "[held by the tenth man] This call was NOT run: a review before it rated \
                         it {} risk because {reason}.\n{}\nIf it is still the right step, call it \
                         again unchanged and it will run; otherwise choose a safer one.",
                        outcome.review.risk_level,
                        review::digest(&outcome.review, outcome.cached)
                    ),
                    started.elapsed(),
                ))
            }
            Ok(_) => None,
            Err(e) => {
                self.emit(Event::Warning {
                    message: format!("the review before a risky {} call failed: {e}", call.name),
                });
                None
            }
        }
    }
}
