//! The tool registry: every tool the model is offered, with its JSON schema, and running one
//! call to a [`ToolOutcome`]. Every tool the registry runs implements [`AgentTool`]: the
//! sandbox tools (shell, read_file, write_file) and each MCP server's tools. A call gets its
//! parsed arguments, the run's cancellation token and the execution's sandbox, under a
//! `tool.call` span. `tenth_man_review` and `search_tools` are registered tools too. The
//! loop still answers `todo_write` and `spawn_subagent` itself: a plan change decides the
//! failure path and the compressions of the step, and spawns run side by side as a group; the
//! registry lists their schemas.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use decima_core::FailureClass;
use decima_llm::ToolSpec;
use decima_sandbox::host::BoxFuture;
use decima_sandbox::host::tools::{
    READ_FILE, SHELL, WRITE_FILE, parse_read_file, parse_shell, parse_write_file, read_file_schema,
    shell_schema, write_file_schema,
};
use decima_sandbox::{Sandbox, ToolError};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument as _, debug, info_span};

use super::plan::{TODO_WRITE, todo_write_schema};
use super::subagent::{SPAWN_SUBAGENT, spawn_subagent_schema};

/// What one tool call produced: the text the model gets, and what the loop needs to know.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// The tool result's content, as stored and sent to the model.
    pub text: String,
    /// Set when the call failed: the class recovery keys on.
    pub class: Option<FailureClass>,
    /// A shell command's exit code.
    pub exit_code: Option<i32>,
    /// Wall time of the call.
    pub duration: Duration,
    /// The call was refused before it touched anything (see [`ToolError::refused`]).
    pub refused: bool,
}

impl ToolOutcome {
    /// A successful call.
    pub fn ok(text: impl Into<String>, duration: Duration) -> Self {
        Self {
            text: text.into(),
            class: None,
            exit_code: None,
            duration,
            refused: false,
        }
    }

    /// A failed call: the model sees the class with the message, so it can adapt.
    pub fn failed(class: FailureClass, message: &str, duration: Duration) -> Self {
        Self {
            text: format!("[tool error: {class}] {message}"),
            class: Some(class),
            exit_code: None,
            duration,
            refused: false,
        }
    }

    /// Whether the call counts as failing (for stuck-loop detection): a tool error, or a command
    /// that exited non-zero or was killed.
    pub fn is_failure(&self) -> bool {
        self.class.is_some() || self.exit_code.is_some_and(|c| c != 0)
    }
}

impl From<(ToolError, Duration)> for ToolOutcome {
    fn from((e, duration): (ToolError, Duration)) -> Self {
        Self {
            refused: e.refused,
            ..Self::failed(e.class, &e.message, duration)
        }
    }
}

/// What one call gets besides the tool itself.
pub struct ToolCallContext<'a> {
    /// The call's id, for spans and saved files.
    pub call_id: &'a str,
    /// The arguments, parsed (the registry refused text that is not JSON).
    pub arguments: &'a serde_json::Value,
    /// The arguments as the model sent them.
    pub raw: &'a str,
    /// Cancelled when the run stops: a tool that waits on something should stop waiting.
    pub cancel: &'a CancellationToken,
    /// The execution's sandbox, where the tool's effects happen.
    pub sandbox: &'a Arc<dyn Sandbox>,
}

/// One tool: what the model is offered, and one call to its outcome. Dropping the call's
/// future must stop it (the run's cancellation does).
pub trait AgentTool: Send + Sync {
    /// Its name and schema, as offered to the model.
    fn spec(&self) -> ToolSpec;
    /// Runs one call.
    fn call<'a>(&'a self, call: ToolCallContext<'a>) -> BoxFuture<'a, ToolOutcome>;
}

/// `shell` in the sandbox.
struct ShellTool;

impl AgentTool for ShellTool {
    fn spec(&self) -> ToolSpec {
        builtin_spec(&shell_schema())
    }

    fn call<'a>(&'a self, call: ToolCallContext<'a>) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let started = Instant::now();
            let request = match parse_shell(call.raw) {
                Ok(request) => request,
                Err(e) => return ToolOutcome::from((e, started.elapsed())),
            };
            match call.sandbox.exec(request).await {
                Ok(out) => ToolOutcome {
                    text: out.to_tool_text(),
                    class: out.timed_out.then_some(FailureClass::Transient),
                    exit_code: out.exit_code,
                    duration: out.duration,
                    refused: false,
                },
                Err(e) => ToolOutcome::from((e, started.elapsed())),
            }
        })
    }
}

/// `read_file` in the sandbox.
struct ReadFileTool;

impl AgentTool for ReadFileTool {
    fn spec(&self) -> ToolSpec {
        builtin_spec(&read_file_schema())
    }

    fn call<'a>(&'a self, call: ToolCallContext<'a>) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let started = Instant::now();
            let outcome = match parse_read_file(call.raw) {
                Ok(request) => call
                    .sandbox
                    .read_file(request)
                    .await
                    .map(|content| content.to_tool_text()),
                Err(e) => Err(e),
            };
            match outcome {
                Ok(text) => ToolOutcome::ok(text, started.elapsed()),
                Err(e) => ToolOutcome::from((e, started.elapsed())),
            }
        })
    }
}

/// `write_file` in the sandbox.
struct WriteFileTool;

impl AgentTool for WriteFileTool {
    fn spec(&self) -> ToolSpec {
        builtin_spec(&write_file_schema())
    }

    fn call<'a>(&'a self, call: ToolCallContext<'a>) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let started = Instant::now();
            let outcome = match parse_write_file(call.raw) {
                Ok(request) => call
                    .sandbox
                    .write_file(request)
                    .await
                    .map(|done| done.to_tool_text()),
                Err(e) => Err(e),
            };
            match outcome {
                Ok(text) => ToolOutcome::ok(text, started.elapsed()),
                Err(e) => ToolOutcome::from((e, started.elapsed())),
            }
        })
    }
}

/// A built-in tool's spec from its schema object (they are written in code, so always whole).
fn builtin_spec(schema: &serde_json::Value) -> ToolSpec {
    spec_of(schema).unwrap_or_else(|| ToolSpec {
        name: String::new(),
        description: String::new(),
        parameters: serde_json::json!({"type": "object"}),
    })
}

/// The tools offered to the model, in a stable order: the sandbox tools, the loop's own, then
/// the others (MCP) by name.
pub struct Registry<'a> {
    sandbox: Arc<dyn Sandbox>,
    /// The sandbox tools by name, in the order they are offered.
    builtins: Vec<(&'static str, Arc<dyn AgentTool>)>,
    /// Tools added later (MCP, the tenth man, the tool search), by name. They may borrow the
    /// run's session.
    extra: BTreeMap<String, Arc<dyn AgentTool + 'a>>,
}

impl<'a> Registry<'a> {
    /// The built-in tools over `sandbox`.
    pub fn new(sandbox: Arc<dyn Sandbox>) -> Self {
        Self {
            sandbox,
            builtins: vec![
                (SHELL, Arc::new(ShellTool)),
                (READ_FILE, Arc::new(ReadFileTool)),
                (WRITE_FILE, Arc::new(WriteFileTool)),
            ],
            extra: BTreeMap::new(),
        }
    }

    /// Whether a file exists in the workspace, as the sandbox sees it (a Docker workspace is a
    /// volume the host cannot look into): the tenth man's check for writes over existing files.
    /// A path the sandbox refuses (outside the workspace) does not exist for it.
    pub async fn file_exists(&self, path: &str) -> bool {
        let request = decima_sandbox::host::ReadFileRequest {
            path: path.to_owned(),
            offset: None,
            limit: Some(1),
        };
        match self.sandbox.read_file(request).await {
            Ok(_) => true,
            // Anything but "not there" (a binary file, a directory) means something is there.
            Err(e) => !e.refused && !e.message.starts_with("no such file"),
        }
    }

    /// Adds a tool; a name already taken is replaced.
    pub fn register(&mut self, tool: Arc<dyn AgentTool + 'a>) {
        self.extra.insert(tool.spec().name, tool);
    }

    /// Every tool's spec, built-ins first.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = self.builtins.iter().map(|(_, t)| t.spec()).collect();
        specs.extend(
            [todo_write_schema(), spawn_subagent_schema()]
                .iter()
                .filter_map(spec_of),
        );
        specs.extend(self.extra.values().map(|t| t.spec()));
        specs
    }

    /// Whether the loop answers this call itself.
    pub fn is_plan_tool(name: &str) -> bool {
        name == TODO_WRITE
    }

    /// The tool the registry runs under `name`.
    fn find(&self, name: &str) -> Option<&(dyn AgentTool + 'a)> {
        match self.builtins.iter().find(|(n, _)| *n == name) {
            Some((_, t)) => Some(t.as_ref()),
            None => self.extra.get(name).map(|t| t.as_ref()),
        }
    }

    /// Runs a call of a registered tool, under a `tool.call` span. Arguments that are not
    /// JSON, and an unknown tool, are data errors the model can read.
    pub async fn call(
        &self,
        call_id: &str,
        name: &str,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> ToolOutcome {
        let span = info_span!("tool.call", tool = %name, call_id = %call_id);
        async {
            let started = Instant::now();
            if let Some((raw, why)) = decima_llm::invalid_arguments(arguments) {
                let shown: String = raw.chars().take(200).collect();
                return ToolOutcome::failed(
                    FailureClass::Data,
                    &format!(
                        "the arguments of this {name} call are not valid JSON ({why}): \
                         {shown:?}; send them again as one JSON object"
                    ),
                    started.elapsed(),
                );
            }
            if name == SPAWN_SUBAGENT {
                return ToolOutcome::failed(
                    FailureClass::Logic,
                    "spawn_subagent is run by the agent loop, not the registry",
                    started.elapsed(),
                );
            }
            let Some(tool) = self.find(name) else {
                return ToolOutcome::failed(
                    FailureClass::Data,
                    &format!(
                        "there is no tool named {:?}; the tools are {}",
                        decima_core::names::echo_untrusted(name),
                        self.specs()
                            .iter()
                            .map(|s| s.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    started.elapsed(),
                );
            };
            let parsed: serde_json::Value = if arguments.trim().is_empty() {
                serde_json::Value::Object(serde_json::Map::new())
            } else {
                serde_json::from_str(arguments).unwrap_or(serde_json::Value::Null)
            };
            let outcome = tool
                .call(ToolCallContext {
                    call_id,
                    arguments: &parsed,
                    raw: arguments,
                    cancel,
                    sandbox: &self.sandbox,
                })
                .await;
            debug!(
                ms = outcome.duration.as_millis() as u64,
                failed = outcome.is_failure(),
                "tool call done"
            );
            outcome
        }
        .instrument(span)
        .await
    }
}

/// A tool spec from a schema object of `name`, `description` and `parameters`.
pub(crate) fn spec_of(schema: &serde_json::Value) -> Option<ToolSpec> {
    Some(ToolSpec {
        name: schema.get("name")?.as_str()?.to_owned(),
        description: schema.get("description")?.as_str()?.to_owned(),
        parameters: schema.get("parameters")?.clone(),
    })
}
