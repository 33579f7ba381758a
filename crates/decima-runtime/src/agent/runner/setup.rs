//! Making a runner: the provider, the sandbox and its snapshots, the tools (the sandbox's, the
//! plan, subagents, the run's MCP servers, the tenth man), the step history read back, and what
//! every request carries.

use std::path::PathBuf;
use std::sync::Arc;

use decima_core::ConversationId;
use decima_core::context::{ExecutionHistoryManager, StepKind, StepRecord};
use decima_llm::tokens::{Calibration, counter_for_model, estimate_request};
use decima_sandbox::{HostLimits, HostSandbox, Sandbox};
use decima_store::{Conversation, Execution, SandboxKind, Store};
use tracing::info;

use super::{Runner, STEP_BATCH, STEP_WINDOW, Turn, plan_tool, spawn, tool_search};
use crate::agent::checkpoint::{Checkpoints, SnapshotSource, snapshot_store};
use crate::agent::docker::LazyDocker;
use crate::agent::lease::Lease;
use crate::agent::options::RunOptions;
use crate::agent::tools::Registry;
use crate::agent::{Session, subagent};
use crate::chat::window_for_turn;
use crate::context::{Scale, preset_of};
use crate::error::{Result, RuntimeError};
use crate::memo::{ModelMemo, ParagraphMemo};
use crate::served_window::Freshness;
use crate::settings;

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
        let root = root_conversation(session.store, &execution).await?;
        let mut run_docker = None;
        let (sandbox, source): (Arc<dyn Sandbox>, SnapshotSource) = match execution.sandbox {
            SandboxKind::Host => (
                Arc::new(HostSandbox::new(workspace.clone(), HostLimits::default())),
                SnapshotSource::Host(workspace.clone()),
            ),
            SandboxKind::Docker => {
                let docker =
                    Arc::new(LazyDocker::new(session.store, session.data_dir, root).await?);
                run_docker = Some(docker.clone());
                (docker.clone(), SnapshotSource::Container(docker))
            }
        };
        let source = if options.workspace_snapshots {
            source
        } else {
            SnapshotSource::None
        };
        let checkpoints = Checkpoints::new(snapshot_store(session.data_dir)?, source, execution.id);
        let calibration = match session
            .store
            .calibrations()
            .get(&resolved.config.model)
            .await?
        {
            Some((factor, samples)) => Calibration { factor, samples },
            None => Calibration::new(),
        };
        let mut history = ExecutionHistoryManager::new(STEP_WINDOW, STEP_BATCH);
        let mut steps_taken = 0u32;
        for step in session.store.steps().list(execution.id).await? {
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
        let deferred = Arc::new(defer_mcp_tools(
            &mut tools,
            &mcp,
            model_counter.as_ref(),
            window.window,
        ));
        if !deferred.held.is_empty() {
            registry.register(Arc::new(tool_search::SearchTool(deferred.clone())));
        }
        let shown_images = if resolved.config.protocol == decima_llm::Protocol::Anthropic {
            shown_only(
                session
                    .store
                    .messages()
                    .tool_result_images(conversation.id)
                    .await?,
            )
        } else {
            std::collections::HashMap::new()
        };
        let request_base = estimate_request(
            model_counter.as_ref(),
            &decima_llm::ChatRequest {
                tools: tools.clone(),
                ..decima_llm::ChatRequest::default()
            },
        );
        Ok(Self {
            registry,
            mcp,
            deferred,
            tools,
            model_memo: ModelMemo::new(model_counter),
            paragraphs: ParagraphMemo::default(),
            request_base,
            shown_images,
            files: tokio::sync::Mutex::new(None),
            session,
            scale: Scale::new(calibration.factor),
            calibration,
            prices: resolved.settings.prices,
            provider: crate::chat::connect(&resolved.config)?,
            config: resolved.config,
            window,
            preset,
            checkpoints,
            options,
            history,
            steps_taken,
            step_limit,
            execution,
            conversation,
            risky_calls_held: std::sync::Mutex::default(),
            step_answers: std::collections::HashMap::new(),
            turn: Turn::default(),
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
