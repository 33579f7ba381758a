import type { CompactionTrigger, CompressionLevel, ExecutionStatus, ReviewTrigger, RunEvent, RunUpdate, TodoView } from "../bindings";

/** A tool call as the live run shows it. */
export type LiveTool = {
  callId: string;
  name: string;
  arguments: string;
  exitCode: number | null;
  durationMs: number | null;
  failureClass: string | null;
  ran: boolean;
  done: boolean;
  /** Images the tool returned, shown on its card once it is done. */
  images: number;
};

/** A subagent started during the run. */
export type LiveSubagent = {
  executionId: string;
  parentId: string;
  conversationId: string;
  depth: number;
  task: string;
  status: ExecutionStatus;
};

/** An MCP call waiting for the analyst's approval. */
export type PendingApproval = {
  callId: string;
  server: string;
  tool: string;
  arguments: string;
  readOnly: boolean | null;
  destructive: boolean | null;
};

/** What the window knows about the run of one conversation. */
export type RunState = {
  runId: string | null;
  executionId: string | null;
  live: boolean;
  text: string;
  /** When Rust sent the newest text delta (epoch ms), for the latency figure. */
  lastDeltaAt: number | null;
  reasoning: string;
  tools: LiveTool[];
  todos: TodoView[] | null;
  snapshotTodoIds: string[];
  usage: number | null;
  awaiting: { executionId: string; failureId: string } | null;
  /** The MCP call that waits for approval, if one does. */
  approval: PendingApproval | null;
  contested: boolean;
  /**
   * The final tenth-man review of the run's answer is running: the status line says so and
   * offers Skip. It ends with the review, its warning (skipped, failed) or the run.
   */
  reviewing: boolean;
  subagents: LiveSubagent[];
  warnings: string[];
  /** Compactions the run made, newest last, for the notice with undo. */
  compactions: { id: string; level: CompressionLevel; trigger: CompactionTrigger; tokensBefore: number; tokensAfter: number }[];
  status: ExecutionStatus | null;
  /** Bumped on every stored message or end: the message list reloads. */
  stored: number;
};

export const idle: RunState = {
  runId: null,
  executionId: null,
  live: false,
  text: "",
  lastDeltaAt: null,
  reasoning: "",
  tools: [],
  todos: null,
  snapshotTodoIds: [],
  usage: null,
  awaiting: null,
  approval: null,
  contested: false,
  reviewing: false,
  subagents: [],
  warnings: [],
  compactions: [],
  status: null,
  stored: 0,
};

/**
 * The run's state after one of its events (`sentAtMs`: when Rust sent it). Pure, so it is
 * tested without a window.
 */
export function reduce(state: RunState, event: RunEvent, sentAtMs: number | null = null): RunState {
  switch (event.type) {
    case "text_delta":
      return { ...state, text: state.text + event.text, lastDeltaAt: sentAtMs, reviewing: false };
    case "reasoning_delta":
      return { ...state, reasoning: state.reasoning + event.text };
    case "discarded":
      return { ...state, text: "", reasoning: "" };
    case "message_stored":
      // What streamed is now a stored message in the list.
      return { ...state, text: "", reasoning: "", stored: state.stored + 1 };
    case "compacted":
      return {
        ...state,
        stored: state.stored + 1,
        compactions: [
          ...state.compactions,
          {
            id: event.compaction_id,
            level: event.level,
            trigger: event.trigger,
            tokensBefore: event.tokens_before,
            tokensAfter: event.tokens_after,
          },
        ],
      };
    case "rolled_back":
      // The list changes: summaries stand in for messages, or messages were undone.
      return { ...state, stored: state.stored + 1 };
    case "execution_started":
      return state.executionId === null ? { ...state, executionId: event.execution_id } : state;
    case "context_usage":
      return { ...state, usage: event.usage };
    case "tool_started":
      return {
        ...state,
        reviewing: false,
        tools: [
          ...state.tools.filter((t) => t.callId !== event.call_id),
          {
            callId: event.call_id,
            name: event.name,
            arguments: event.arguments,
            exitCode: null,
            durationMs: null,
            failureClass: null,
            ran: true,
            done: false,
            images: 0,
          },
        ],
      };
    case "tool_finished": {
      const known = state.tools.some((t) => t.callId === event.call_id);
      const finished = (t: LiveTool): LiveTool => ({
        ...t,
        exitCode: event.exit_code,
        durationMs: event.duration_ms,
        failureClass: event.class,
        ran: event.ran,
        done: true,
        images: event.images,
      });
      return {
        ...state,
        // A call that finished is no longer waiting for approval (answered, or the run stopped).
        approval: state.approval?.callId === event.call_id ? null : state.approval,
        tools: known
          ? state.tools.map((t) => (t.callId === event.call_id ? finished(t) : t))
          : [
              ...state.tools,
              finished({
                callId: event.call_id,
                name: event.name,
                arguments: "",
                exitCode: null,
                durationMs: null,
                failureClass: null,
                ran: event.ran,
                done: true,
                images: event.images,
              }),
            ],
      };
    }
    case "todos_changed":
      return { ...state, todos: event.todos };
    case "snapshot_taken":
      return event.todo_id && !state.snapshotTodoIds.includes(event.todo_id)
        ? { ...state, snapshotTodoIds: [...state.snapshotTodoIds, event.todo_id] }
        : state;
    case "awaiting_choice":
      return { ...state, awaiting: { executionId: event.execution_id, failureId: event.failure_id } };
    case "recovered":
      // A failure reported since (a rollback reports a new one) still waits.
      return state.awaiting === null || state.awaiting.failureId === event.failure_id ? { ...state, awaiting: null } : state;
    case "subagent_started":
      return {
        ...state,
        subagents: [
          ...state.subagents.filter((s) => s.executionId !== event.execution_id),
          {
            executionId: event.execution_id,
            parentId: event.parent_id,
            conversationId: event.conversation_id,
            depth: event.depth,
            task: event.task,
            status: "running",
          },
        ],
      };
    case "subagent_finished":
      return {
        ...state,
        subagents: state.subagents.map((s) =>
          s.executionId === event.execution_id ? { ...s, status: event.status } : s,
        ),
      };
    case "review_started":
      return isFinalReview(state, event.trigger) ? { ...state, reviewing: true } : state;
    case "review_finished":
      return { ...state, reviewing: false, contested: state.contested || event.contested };
    case "warning":
      // A final review that was skipped, stopped or failed says so in a warning, then the run ends.
      return { ...state, reviewing: false, warnings: [...state.warnings.slice(-4), event.message] };
    case "approval_asked":
      return {
        ...state,
        approval: {
          callId: event.call_id,
          server: event.server,
          tool: event.tool,
          arguments: event.arguments,
          readOnly: event.read_only,
          destructive: event.destructive,
        },
      };
    case "finished":
      return event.execution_id === state.executionId ? { ...state, status: event.status, reviewing: false } : state;
    default:
      return state;
  }
}

/** The run's state once it is over: nothing follows. */
export function end(state: RunState, ended: RunEnded): RunState {
  return {
    ...state,
    live: false,
    runId: null,
    text: "",
    reasoning: "",
    status: ended.status ?? state.status,
    awaiting: ended.status === "awaiting_user" ? state.awaiting : null,
    approval: null,
    reviewing: false,
    stored: state.stored + 1,
  };
}

/** The end of a run, as its channel's last message carries it. */
export type RunEnded = Omit<Extract<RunUpdate, { kind: "ended" }>, "kind">;

/** The run's state after one message of its channel. */
export function receive(state: RunState, update: RunUpdate): RunState {
  return update.kind === "event" ? reduce(state, update.event, update.sentAtMs) : end(state, update);
}

/**
 * Whether a review that starts now is the run's final one: the runtime's own (`system`) review
 * once the answer is in, while no tool call is running. The review before a risky call is a
 * `system` one too, but its call has started and is not done; a subagent works inside its
 * parent's running call.
 */
function isFinalReview(state: RunState, trigger: ReviewTrigger): boolean {
  return trigger === "system" && state.approval === null && state.tools.every((t) => t.done);
}
