//! The tool registry: every tool the model is offered, with its JSON schema, and running one
//! call to a [`ToolOutcome`]. Every tool implements [`AgentTool`]: the sandbox tools (shell,
//! read_file, write_file), `todo_write`, `spawn_subagent`, `tenth_man_review`,
//! `search_tools` and each MCP server's tools. A call gets its parsed arguments, the run's
//! cancellation token and the execution's sandbox, under a `tool.call` span. What a call
//! means for the loop beyond its text (a plan change) comes back as a [`ToolEffect`], so the
//! loop never asks which tool ran.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use decima_core::FailureClass;
use decima_llm::ToolSpec;
use decima_sandbox::host::BoxFuture;
use decima_sandbox::host::tools::{
    parse_read_file, parse_shell, parse_write_file, read_file_schema, shell_schema,
    write_file_schema,
};
use decima_sandbox::{Sandbox, ToolError};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument as _, debug, info_span};

use crate::plan::Transitions;

/// What one tool call produced: the text the model gets (its images, the files it made), and
/// what the loop needs to know.
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
    /// What the call changed that the loop acts on.
    pub effect: Option<ToolEffect>,
    /// Images the tool returned, kept with the result (and shown to a model that takes them).
    pub images: Vec<decima_core::ImagePart>,
    /// The workspace files the call created or changed (workspace-relative): named in the
    /// step's supervision record, so the step history keeps which step made which file.
    pub files: Vec<String>,
}

/// What a call changed besides the workspace, for the loop to act on once the result is
/// stored: snapshots, compressions, a failed todo's failure path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolEffect {
    /// The plan was replaced; these are its todos' moves.
    PlanChanged(Transitions),
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
            effect: None,
            images: Vec::new(),
            files: Vec::new(),
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
            effect: None,
            images: Vec::new(),
            files: Vec::new(),
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
    /// Whether calls of this tool that follow each other in one answer run side by side
    /// (subagents do). The loop then waits for the whole group, so such a tool must stop on
    /// the cancellation token itself.
    fn concurrent(&self) -> bool {
        false
    }
    /// Whether a call can create or change files in the workspace: the loop then notes what
    /// it changed (and keeps the images it wrote with its result).
    fn changes_workspace(&self) -> bool {
        false
    }
}

/// `shell` in the sandbox, described in the language of the sandbox's shell.
struct ShellTool {
    kind: decima_sandbox::ShellKind,
}

impl AgentTool for ShellTool {
    fn spec(&self) -> ToolSpec {
        builtin_spec(&shell_schema(self.kind))
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
                    effect: None,
                    images: Vec::new(),
                    files: Vec::new(),
                },
                Err(e) => ToolOutcome::from((e, started.elapsed())),
            }
        })
    }

    fn changes_workspace(&self) -> bool {
        true
    }
}

/// `read_file` in the sandbox.
struct ReadFileTool;

impl AgentTool for ReadFileTool {
    fn spec(&self) -> ToolSpec {
        builtin_spec(&read_file_schema())
    }

    fn call<'a>(&'a self, call: ToolCallContext<'a>) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(timed(async move {
            let request = parse_read_file(call.raw)?;
            Ok(call.sandbox.read_file(request).await?.to_tool_text())
        }))
    }
}

/// `write_file` in the sandbox.
struct WriteFileTool;

impl AgentTool for WriteFileTool {
    fn spec(&self) -> ToolSpec {
        builtin_spec(&write_file_schema())
    }

    fn call<'a>(&'a self, call: ToolCallContext<'a>) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(timed(async move {
            let request = parse_write_file(call.raw)?;
            Ok(call.sandbox.write_file(request).await?.to_tool_text())
        }))
    }

    fn changes_workspace(&self) -> bool {
        true
    }
}

/// A file tool's work, timed: its text, or the error the model is told (a bad argument or
/// what the sandbox refused), with the time either took.
async fn timed(
    work: impl Future<Output = std::result::Result<String, decima_sandbox::ToolError>>,
) -> ToolOutcome {
    let started = Instant::now();
    match work.await {
        Ok(text) => ToolOutcome::ok(text, started.elapsed()),
        Err(e) => ToolOutcome::from((e, started.elapsed())),
    }
}

/// A built-in tool's spec from its schema object (they are written in code, so always whole).
pub(crate) fn builtin_spec(schema: &serde_json::Value) -> ToolSpec {
    spec_of(schema).unwrap_or_else(|| ToolSpec {
        name: String::new(),
        description: String::new(),
        parameters: serde_json::json!({"type": "object"}),
    })
}

/// The tools offered to the model, in a stable order: the sandbox tools, then the loop's own
/// (`todo_write`, `spawn_subagent`) in the order they were added, then the others (MCP, the
/// tenth man, the tool search) by name.
pub struct Registry<'a> {
    sandbox: Arc<dyn Sandbox>,
    /// Offered first, in this order, by name.
    core: Vec<(String, Arc<dyn AgentTool + 'a>)>,
    /// Tools added later, by name. They may borrow the run's session.
    extra: BTreeMap<String, Arc<dyn AgentTool + 'a>>,
}

impl<'a> Registry<'a> {
    /// The sandbox tools over `sandbox`.
    pub fn new(sandbox: Arc<dyn Sandbox>) -> Self {
        let kind = sandbox.shell_kind();
        let mut registry = Self {
            sandbox,
            core: Vec::new(),
            extra: BTreeMap::new(),
        };
        registry.register_core(Arc::new(ShellTool { kind }));
        registry.register_core(Arc::new(ReadFileTool));
        registry.register_core(Arc::new(WriteFileTool));
        registry
    }

    /// Adds a tool to those offered first, after the ones already there.
    pub fn register_core(&mut self, tool: Arc<dyn AgentTool + 'a>) {
        let name = tool.spec().name;
        self.core.retain(|(n, _)| *n != name);
        self.core.push((name, tool));
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

    /// Every tool's spec, the core tools first.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.core
            .iter()
            .map(|(_, t)| t)
            .chain(self.extra.values())
            .map(|t| t.spec())
            .collect()
    }

    /// The tool the registry runs under `name`.
    fn find(&self, name: &str) -> Option<&(dyn AgentTool + 'a)> {
        match self.core.iter().find(|(n, _)| n == name) {
            Some((_, t)) => Some(t.as_ref()),
            None => self.extra.get(name).map(|t| t.as_ref()),
        }
    }

    /// Whether a call of `name` can change the workspace.
    pub fn changes_workspace(&self, name: &str) -> bool {
        self.find(name).is_some_and(|t| t.changes_workspace())
    }

    /// The execution's sandbox.
    pub fn sandbox(&self) -> &Arc<dyn Sandbox> {
        &self.sandbox
    }

    /// Whether calls of `name` run side by side with the calls of it that follow.
    pub fn is_concurrent(&self, name: &str) -> bool {
        self.find(name).is_some_and(|t| t.concurrent())
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
                match serde_json::from_str(arguments) {
                    Ok(parsed) => parsed,
                    // The provider layer repairs or marks what it could not parse; text that
                    // reaches here unparsed (a stored call, resumed) is refused the same way.
                    Err(e) => {
                        let shown: String = arguments.chars().take(200).collect();
                        return ToolOutcome::failed(
                            FailureClass::Data,
                            &format!(
                                "the arguments of this {name} call are not valid JSON ({e}): \
                                 {shown:?}; send them again as one JSON object"
                            ),
                            started.elapsed(),
                        );
                    }
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use decima_sandbox::{HostLimits, HostSandbox};
    use std::sync::Mutex;

    /// A tool that keeps what each call got.
    struct Recording {
        name: &'static str,
        concurrent: bool,
        seen: Mutex<Vec<(String, serde_json::Value)>>,
    }

    impl Recording {
        fn new(name: &'static str, concurrent: bool) -> Arc<Self> {
            Arc::new(Self {
                name,
                concurrent,
                seen: Mutex::new(Vec::new()),
            })
        }
    }

    impl AgentTool for Recording {
        fn spec(&self) -> ToolSpec {
            ToolSpec {
                name: self.name.to_owned(),
                description: "records".into(),
                parameters: serde_json::json!({"type": "object"}),
            }
        }

        fn call<'a>(&'a self, call: ToolCallContext<'a>) -> BoxFuture<'a, ToolOutcome> {
            Box::pin(async move {
                if let Ok(mut seen) = self.seen.lock() {
                    seen.push((call.call_id.to_owned(), call.arguments.clone()));
                }
                ToolOutcome::ok(format!("{} ran", self.name), Duration::ZERO)
            })
        }

        fn concurrent(&self) -> bool {
            self.concurrent
        }
    }

    fn registry(dir: &tempfile::TempDir) -> Registry<'static> {
        Registry::new(Arc::new(HostSandbox::new(
            dir.path().to_path_buf(),
            HostLimits::default(),
        )))
    }

    #[test]
    fn tools_are_offered_sandbox_first_then_core_in_order_then_the_rest_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let mut registry = registry(&dir);
        registry.register(Recording::new("zeta", false));
        registry.register(Recording::new("alpha", false));
        registry.register_core(Recording::new("todo_write", false));
        registry.register_core(Recording::new("spawn_subagent", true));
        // Registering a core tool again replaces it in place of adding a second.
        registry.register_core(Recording::new("todo_write", false));
        let names: Vec<String> = registry.specs().into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "shell",
                "read_file",
                "write_file",
                "spawn_subagent",
                "todo_write",
                "alpha",
                "zeta"
            ]
        );
        assert!(registry.is_concurrent("spawn_subagent"));
        assert!(!registry.is_concurrent("todo_write"));
        assert!(!registry.is_concurrent("shell"));
        assert!(!registry.is_concurrent("no_such_tool"));
    }

    #[tokio::test]
    async fn every_tool_is_dispatched_by_the_registry_with_its_parsed_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let mut registry = registry(&dir);
        let plan = Recording::new("todo_write", false);
        let spawn = Recording::new("spawn_subagent", true);
        registry.register_core(plan.clone());
        registry.register_core(spawn.clone());
        let cancel = CancellationToken::new();
        let out = registry
            .call("c1", "spawn_subagent", r#"{"task": "look"}"#, &cancel)
            .await;
        assert_eq!(out.text, "spawn_subagent ran");
        let out = registry.call("c2", "todo_write", "", &cancel).await;
        assert_eq!(out.text, "todo_write ran");
        assert_eq!(
            *spawn.seen.lock().unwrap(),
            [("c1".to_owned(), serde_json::json!({"task": "look"}))]
        );
        // Empty arguments are an empty object, not null.
        assert_eq!(
            *plan.seen.lock().unwrap(),
            [("c2".to_owned(), serde_json::json!({}))]
        );
        let shell = registry
            .call("c3", "shell", r#"{"command": "echo hi"}"#, &cancel)
            .await;
        assert_eq!(shell.exit_code, Some(0), "{}", shell.text);
        assert!(shell.text.contains("hi"), "{}", shell.text);
    }

    #[tokio::test]
    async fn arguments_that_are_not_json_and_unknown_tools_are_data_errors_that_run_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut registry = registry(&dir);
        let plan = Recording::new("todo_write", false);
        registry.register_core(plan.clone());
        let cancel = CancellationToken::new();
        let broken = registry
            .call("c1", "todo_write", "{\"todos\": [", &cancel)
            .await;
        assert_eq!(broken.class, Some(FailureClass::Data));
        assert!(broken.text.contains("not valid JSON"), "{}", broken.text);
        let unknown = registry.call("c2", "rm_everything", "{}", &cancel).await;
        assert_eq!(unknown.class, Some(FailureClass::Data));
        assert!(
            unknown
                .text
                .contains("shell, read_file, write_file, todo_write"),
            "{}",
            unknown.text
        );
        assert!(plan.seen.lock().unwrap().is_empty());
    }
}
