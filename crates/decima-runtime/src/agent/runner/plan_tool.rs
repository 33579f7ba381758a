//! `todo_write` as a tool: the whole plan is replaced in one transaction, and the todos' moves
//! go back to the loop as the call's effect (snapshots, compressions, a failed todo's failure
//! path are the loop's to take).

use crate::agent::BoxFuture;
use crate::events::EventSink;
use crate::events::{Event, TodoView};
use crate::plan;
use crate::tools::ToolOutcome;
use crate::tools::{AgentTool, ToolCallContext, ToolEffect, builtin_spec};
use decima_core::{ExecutionId, FailureClass};
use decima_store::Store;
use std::time::Instant;

/// `todo_write` for one execution.
pub(super) struct PlanTool<'s> {
    /// Where the plan is kept.
    pub store: &'s Store,
    /// Where the new plan is shown.
    pub events: &'s dyn EventSink,
    /// Whose plan it is.
    pub execution: ExecutionId,
}

impl AgentTool for PlanTool<'_> {
    fn spec(&self) -> decima_llm::ToolSpec {
        builtin_spec(&plan::todo_write_schema())
    }

    fn call<'c>(&'c self, call: ToolCallContext<'c>) -> BoxFuture<'c, ToolOutcome> {
        Box::pin(async move {
            let started = Instant::now();
            let failed =
                |class, message: &str| ToolOutcome::failed(class, message, started.elapsed());
            let todos = self.store.todos();
            let before = match todos.plan(self.execution).await {
                Ok(before) => before,
                Err(e) => {
                    return failed(
                        FailureClass::System,
                        &format!("the plan could not be read: {e}"),
                    );
                }
            };
            let inputs = match plan::parse_todo_write(call.raw, &before) {
                Ok(inputs) => inputs,
                Err(message) => return failed(FailureClass::Data, &message),
            };
            let after = match todos.replace_plan(self.execution, &inputs).await {
                Ok(after) => after,
                Err(
                    e @ (decima_store::StoreError::InvalidInput(_)
                    | decima_store::StoreError::NotFound { .. }),
                ) => return failed(FailureClass::Data, &e.to_string()),
                Err(e) => {
                    return failed(
                        FailureClass::System,
                        &format!("the plan could not be saved: {e}"),
                    );
                }
            };
            self.events.emit(Event::TodosChanged {
                todos: after.iter().map(TodoView::from).collect(),
            });
            ToolOutcome {
                effect: Some(ToolEffect::PlanChanged(plan::transitions(&before, &after))),
                ..ToolOutcome::ok(plan::render_plan(&after), started.elapsed())
            }
        })
    }
}
