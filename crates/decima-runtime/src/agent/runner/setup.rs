//! Making a runner: the provider, the sandbox and its snapshots, the tools (the sandbox's, the
//! plan, subagents, the run's MCP servers, the tenth man), the step history read back, and what
//! every request carries.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use decima_core::ConversationId;
use decima_core::context::{ExecutionHistoryManager, StepKind, StepRecord};
use decima_llm::tokens::{Calibration, counter_for_model, estimate_request};
use decima_sandbox::{HostLimits, HostSandbox, Sandbox};
use decima_store::{Conversation, Execution, SandboxKind, Store};
use tracing::info;

use super::{
    Carried, Gates, ModelLink, Runner, STEP_BATCH, STEP_WINDOW, TokenCounting, WindowCache,
    plan_tool, spawn, tool_search,
};
use crate::agent::checkpoint::{Checkpoints, SnapshotSource, snapshot_store};
use crate::agent::options::RunOptions;
use crate::agent::{Session, subagent};
use crate::chat::window_for_turn;
use crate::context::preset_of;
use crate::docker::LazyDocker;
use crate::error::{Result, RuntimeError};
use crate::lease::Lease;
use crate::served_window::Freshness;
use crate::settings;
use crate::tools::Registry;

impl<'s, 'a> Runner<'s, 'a> {
    pub(super) async fn new(
        session: &'s Session<'a>,
        execution: Execution,
        conversation: Conversation,
        mut resolved: settings::ResolvedProvider,
        lease: Lease,
    ) -> Result<Self> {
        let options = RunOptions::from_stored(&execution.options);
        // Fitted to the window the server serves, asked at most every few minutes.
        let fitted =
            crate::served_window::fit(session.store, &mut resolved, Freshness::Cached).await?;
        if let Some(warning) = fitted.and_then(|f| f.warning) {
            session
                .events
                .emit(crate::events::Event::Warning { message: warning });
        }
        let window = window_for_turn(options.provider.as_deref(), &resolved)?;
        let preset = preset_of(session.store, &conversation).await?;
        let workspace = existing_workspace(&execution)?;
        let root = root_conversation(session.store, &execution).await?;
        let RunSandbox {
            sandbox,
            checkpoints,
            docker: run_docker,
        } = open_sandbox(session, &execution, &options, &workspace, root).await?;
        let calibration = calibration_of(session.store, &resolved.config.model).await?;
        let (history, steps_taken) = step_history(session.store, &execution).await?;
        let step_limit = options.max_steps.max(1);
        let mut registry = Registry::new(sandbox);
        let (mcp, mut tools) = if options.quick {
            // A quick chat offers no tool: no server starts for it.
            (crate::mcp::McpSession::default(), Vec::new())
        } else {
            Self::register_tools(
                session,
                &execution,
                &options,
                &mut registry,
                crate::mcp::StartRequest {
                    store: session.store,
                    data_dir: session.data_dir,
                    conversation: conversation.id,
                    host_workspace: (execution.sandbox == SandboxKind::Host)
                        .then_some(workspace.as_path()),
                    protocol: resolved.config.protocol,
                    docker: run_docker,
                    root_conversation: root,
                    events: session.events,
                },
            )
            .await?
        };
        let model_counter = counter_for_model(
            &resolved.config.model,
            resolved.config.tokenizer_json.as_deref(),
        )?;
        let deferred = offer_search(
            &mut registry,
            &mut tools,
            &mcp,
            model_counter.as_ref(),
            window.window,
        );
        let shown_images =
            shown_images_of(session.store, &conversation, resolved.config.protocol).await?;
        let request_base = request_base(model_counter.as_ref(), &tools);
        Ok(Self {
            registry,
            mcp,
            deferred,
            tools,
            shown_images,
            files: tokio::sync::Mutex::new(None),
            session,
            counting: TokenCounting::new(calibration, model_counter, request_base),
            link: ModelLink::connect(resolved.config, resolved.settings.prices)?,
            window,
            preset,
            checkpoints,
            options,
            history,
            steps_taken,
            step_limit,
            execution,
            conversation,
            gates: Gates::default(),
            step_answers: std::collections::HashMap::new(),
            todo: super::TodoState::default(),
            window_cache: WindowCache::default(),
            carried: Carried::default(),
            _lease: lease,
        })
    }

    /// A runner for an execution that already exists (recover, resume).
    pub(super) async fn open(
        session: &'s Session<'a>,
        execution: Execution,
        lease: Lease,
    ) -> Result<Self> {
        let options = RunOptions::from_stored(&execution.options);
        let provider = session.provider.map(str::to_owned).or(options.provider);
        let resolved =
            settings::resolve(session.store, session.data_dir, provider.as_deref()).await?;
        let conversation = session
            .store
            .conversations()
            .get(execution.conversation_id)
            .await?;
        Self::new(session, execution, conversation, resolved, lease).await
    }

    /// Registers a run's tools (its plan, subagents, the conversation's MCP servers, the tenth
    /// man when it runs as a tool) and starts the servers: what a run offers the model unless
    /// it is a quick chat.
    async fn register_tools(
        session: &'s Session<'a>,
        execution: &Execution,
        options: &RunOptions,
        registry: &mut Registry<'s>,
        servers: crate::mcp::StartRequest<'_>,
    ) -> Result<(crate::mcp::McpSession, Vec<decima_llm::ToolSpec>)> {
        let conversation = servers.conversation;
        if registry.sandbox().python_unavailable().is_none() {
            registry.register_core(Arc::new(crate::python_tool::PythonTool {
                kernel: execution.conversation_id.to_string(),
            }));
        }
        registry.register_core(Arc::new(plan_tool::PlanTool {
            store: session.store,
            events: session.events,
            execution: execution.id,
        }));
        registry.register_core(Arc::new(spawn::SubagentTool::new(
            session,
            execution.clone(),
            options.clone(),
        )));
        let mcp = crate::mcp::McpSession::start(servers).await?;
        for tool in mcp.tools() {
            registry.register(tool);
        }
        if options.tenth_man.tool() {
            registry.register(Arc::new(crate::review::tool::TenthManTool {
                store: session.store,
                data_dir: session.data_dir,
                events: session.events,
                agent_provider: options.provider.clone(),
                conversation,
                execution: execution.id,
                reviewer: options.reviewer_provider.clone(),
            }));
        }
        let tools = registry.specs();
        Ok((mcp, tools))
    }
}

/// The run's workspace, which must still be there: a run does not start in a folder that is
/// gone.
fn existing_workspace(execution: &Execution) -> Result<PathBuf> {
    let workspace = PathBuf::from(execution.workspace.clone().ok_or_else(|| {
        RuntimeError::Config(format!("execution {} has no workspace", execution.id))
    })?);
    if !workspace.is_dir() {
        return Err(RuntimeError::Config(format!(
            "the workspace {} of execution {} is gone; restore it or start a new run",
            workspace.display(),
            execution.id
        )));
    }
    Ok(workspace)
}

/// Where a run's commands run, and what its checkpoints snapshot.
struct RunSandbox {
    sandbox: Arc<dyn Sandbox>,
    checkpoints: Checkpoints,
    /// The run's Docker sandbox, when it runs in one: its MCP servers placed in Docker use it.
    docker: Option<Arc<LazyDocker>>,
}

/// Opens the run's sandbox, on the host or in the tree's Docker container, and its checkpoints,
/// which snapshot the workspace unless the run's options turned that off.
async fn open_sandbox(
    session: &Session<'_>,
    execution: &Execution,
    options: &RunOptions,
    workspace: &Path,
    root: ConversationId,
) -> Result<RunSandbox> {
    let mut docker = None;
    let (sandbox, source): (Arc<dyn Sandbox>, SnapshotSource) = match execution.sandbox {
        SandboxKind::Host => (
            Arc::new(HostSandbox::new(
                workspace.to_path_buf(),
                HostLimits::default(),
            )),
            SnapshotSource::Host(workspace.to_path_buf()),
        ),
        SandboxKind::Docker => {
            let lazy = Arc::new(LazyDocker::new(session.store, session.data_dir, root).await?);
            docker = Some(lazy.clone());
            (lazy.clone(), SnapshotSource::Container(lazy))
        }
    };
    let source = if options.workspace_snapshots {
        source
    } else {
        SnapshotSource::None
    };
    let checkpoints = Checkpoints::new(snapshot_store(session.data_dir)?, source, execution.id);
    Ok(RunSandbox {
        sandbox,
        checkpoints,
        docker,
    })
}

/// The calibration learned for `model` from its reported usage, or a new one.
async fn calibration_of(store: &Store, model: &str) -> Result<Calibration> {
    Ok(match store.calibrations().get(model).await? {
        Some((factor, samples)) => Calibration { factor, samples },
        None => Calibration::new(),
    })
}

/// The execution's step records read back into its history, and the model calls it made so
/// far (its analysis records).
async fn step_history(
    store: &Store,
    execution: &Execution,
) -> Result<(ExecutionHistoryManager, u32)> {
    let mut history = ExecutionHistoryManager::new(STEP_WINDOW, STEP_BATCH);
    let mut steps_taken = 0u32;
    for step in store.steps().list(execution.id).await? {
        let kind = match step.kind.as_str() {
            "analysis" => {
                steps_taken += 1;
                StepKind::Analysis
            }
            "action" => StepKind::Action,
            "supervision" => StepKind::Supervision,
            _ => continue,
        };
        history.push(StepRecord {
            step: steps_taken.max(1),
            kind,
            content: step.content,
        });
    }
    Ok((history, steps_taken))
}

/// The images of the conversation's tool results the model is shown: only Anthropic's
/// requests carry them.
async fn shown_images_of(
    store: &Store,
    conversation: &Conversation,
    protocol: decima_llm::Protocol,
) -> Result<std::collections::HashMap<String, Vec<decima_core::ImagePart>>> {
    if protocol != decima_llm::Protocol::Anthropic {
        return Ok(std::collections::HashMap::new());
    }
    Ok(shown_only(
        store.messages().tool_result_images(conversation.id).await?,
    ))
}

/// The images a model is shown, by call: those that cost tokens (the others were kept for the
/// window only).
fn shown_only(
    stored: Vec<(String, Vec<decima_core::ImagePart>)>,
) -> std::collections::HashMap<String, Vec<decima_core::ImagePart>> {
    stored
        .into_iter()
        .filter_map(|(call, images)| {
            let shown: Vec<_> = images.into_iter().filter(|i| i.tokens > 0).collect();
            (!shown.is_empty()).then_some((call, shown))
        })
        .collect()
}

/// Holds the MCP tools back behind `search_tools` when they would take too much of the window
/// ([`defer_mcp_tools`]), and then registers that tool to find them.
fn offer_search(
    registry: &mut Registry<'_>,
    tools: &mut Vec<decima_llm::ToolSpec>,
    mcp: &crate::mcp::McpSession,
    counter: &dyn decima_core::TokenCounter,
    window: u32,
) -> Arc<tool_search::Deferred> {
    let deferred = Arc::new(defer_mcp_tools(tools, mcp, counter, window));
    if !deferred.held.is_empty() {
        registry.register(Arc::new(tool_search::SearchTool(deferred.clone())));
    }
    deferred
}

/// The model's count of what every request carries besides its messages: the tools offered.
fn request_base(counter: &dyn decima_core::TokenCounter, tools: &[decima_llm::ToolSpec]) -> u32 {
    estimate_request(
        counter,
        &decima_llm::ChatRequest {
            tools: tools.to_vec(),
            ..decima_llm::ChatRequest::default()
        },
    )
}

/// Holds the MCP tools back behind `search_tools` when their schemas would take more than
/// [`crate::mcp::search::DIRECT_SHARE`] of the window.
fn defer_mcp_tools(
    tools: &mut Vec<decima_llm::ToolSpec>,
    mcp: &crate::mcp::McpSession,
    counter: &dyn decima_core::TokenCounter,
    window: u32,
) -> tool_search::Deferred {
    let is_mcp = |s: &decima_llm::ToolSpec| mcp.resolve(&s.name).is_some();
    let tokens: u64 = tools
        .iter()
        .filter(|s| is_mcp(s))
        .map(|s| u64::from(counter.count_text(&serde_json::to_string(s).unwrap_or_default())))
        .sum();
    let budget = (f64::from(window) * crate::mcp::search::DIRECT_SHARE) as u64;
    if tokens <= budget {
        return tool_search::Deferred::default();
    }
    let (held, direct): (Vec<_>, Vec<_>) = std::mem::take(tools).into_iter().partition(is_mcp);
    *tools = direct;
    let servers = mcp.server_names();
    tools.push(crate::mcp::search::search_tools_spec(&servers));
    info!(
        tools = held.len(),
        tokens, budget, "MCP tools are offered through search_tools"
    );
    tool_search::Deferred {
        held,
        servers,
        ..tool_search::Deferred::default()
    }
}

/// The conversation at the root of an execution's tree: its Docker container and settings are
/// the tree's.
pub(super) async fn root_conversation(
    store: &Store,
    execution: &Execution,
) -> Result<ConversationId> {
    let chain = subagent::lineage(store, execution).await?;
    Ok(chain
        .last()
        .map_or(execution.conversation_id, |root| root.conversation_id))
}
