//! The tool registry: every tool the model is offered, with its JSON schema, and running one
//! call to a [`ToolOutcome`]. The sandbox tools (shell, read_file, write_file) run in the
//! execution's sandbox; `todo_write` is answered by the loop itself, since it changes the
//! execution's own state. Later tools (subagents, the tenth man) join through [`AgentTool`].

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

/// A tool that a later capability adds to the registry (spawn_subagent, tenth_man_review).
pub trait AgentTool: Send + Sync {
    /// Its name and schema, as offered to the model.
    fn spec(&self) -> ToolSpec;
    /// Runs one call with the model's raw JSON arguments.
    fn call<'a>(&'a self, arguments: &'a str) -> BoxFuture<'a, ToolOutcome>;
}

/// The tools offered to the model, in a stable order.
pub struct Registry {
    sandbox: Arc<dyn Sandbox>,
    extra: BTreeMap<String, Arc<dyn AgentTool>>,
}

impl Registry {
    /// The built-in tools over `sandbox`.
    pub fn new(sandbox: Arc<dyn Sandbox>) -> Self {
        Self {
            sandbox,
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
    pub fn register(&mut self, tool: Arc<dyn AgentTool>) {
        self.extra.insert(tool.spec().name, tool);
    }

    /// Every tool's spec, built-ins first.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = [
            shell_schema(),
            read_file_schema(),
            write_file_schema(),
            todo_write_schema(),
            spawn_subagent_schema(),
        ]
        .iter()
        .filter_map(spec_of)
        .collect();
        specs.extend(self.extra.values().map(|t| t.spec()));
        specs
    }

    /// Whether the loop answers this call itself.
    pub fn is_plan_tool(name: &str) -> bool {
        name == TODO_WRITE
    }

    /// Runs a sandbox or registered tool. An unknown tool is a data error the model can read.
    pub async fn call(&self, name: &str, arguments: &str) -> ToolOutcome {
        let started = Instant::now();
        let failed = |e: ToolError| ToolOutcome::from((e, started.elapsed()));
        if let Some((raw, why)) = decima_llm::invalid_arguments(arguments) {
            let shown: String = raw.chars().take(200).collect();
            return ToolOutcome::failed(
                FailureClass::Data,
                &format!(
                    "the arguments of this {name} call are not valid JSON ({why}): {shown:?}; \
                     send them again as one JSON object"
                ),
                started.elapsed(),
            );
        }
        match name {
            SHELL => match parse_shell(arguments) {
                Ok(request) => match self.sandbox.exec(request).await {
                    Ok(out) => {
                        let class = out.timed_out.then_some(FailureClass::Transient);
                        ToolOutcome {
                            text: out.to_tool_text(),
                            class,
                            exit_code: out.exit_code,
                            duration: out.duration,
                            refused: false,
                        }
                    }
                    Err(e) => failed(e),
                },
                Err(e) => failed(e),
            },
            READ_FILE => match parse_read_file(arguments) {
                Ok(request) => match self.sandbox.read_file(request).await {
                    Ok(content) => ToolOutcome::ok(content.to_tool_text(), started.elapsed()),
                    Err(e) => failed(e),
                },
                Err(e) => failed(e),
            },
            WRITE_FILE => match parse_write_file(arguments) {
                Ok(request) => match self.sandbox.write_file(request).await {
                    Ok(done) => ToolOutcome::ok(done.to_tool_text(), started.elapsed()),
                    Err(e) => failed(e),
                },
                Err(e) => failed(e),
            },
            SPAWN_SUBAGENT => ToolOutcome::failed(
                FailureClass::Logic,
                "spawn_subagent is run by the agent loop, not the registry",
                started.elapsed(),
            ),
            other => match self.extra.get(other) {
                Some(tool) => tool.call(arguments).await,
                None => ToolOutcome::failed(
                    FailureClass::Data,
                    &format!(
                        "there is no tool named {:?}; the tools are {}",
                        decima_core::names::echo_untrusted(other),
                        self.specs()
                            .iter()
                            .map(|s| s.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    started.elapsed(),
                ),
            },
        }
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
