import type { CompactionTrigger, CompressionLevel, ExecutionStatus, RunEvent, TodoItem } from "../bindings";

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
  /** When Rust forwarded the newest text delta (epoch ms), for the latency figure. */
  lastDeltaAt: number | null;
  reasoning: string;
  tools: LiveTool[];
  todos: TodoItem[] | null;
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

/** The run's state after one of its events. Pure, so it is tested without a window. */
export function reduce(state: RunState, event: RunEvent): RunState {
  switch (event.type) {
    case "textDelta":
      return { ...state, text: state.text + event.text, lastDeltaAt: event.atMs, reviewing: false };
    case "reasoningDelta":
      return { ...state, reasoning: state.reasoning + event.text };
    case "discarded":
      return { ...state, text: "", reasoning: "" };
    case "messageStored":
      // What streamed is now a stored message in the list.
      return { ...state, text: "", reasoning: "", stored: state.stored + 1 };
    case "compacted":
      return {
        ...state,
        stored: state.stored + 1,
        compactions: [
          ...state.compactions,
          {
            id: event.compactionId,
            level: event.level,
            trigger: event.trigger,
            tokensBefore: event.tokensBefore,
            tokensAfter: event.tokensAfter,
          },
        ],
      };
    case "rolledBack":
      // The list changes: summaries stand in for messages, or messages were undone.
      return { ...state, stored: state.stored + 1 };
    case "executionStarted":
      return state.executionId === null ? { ...state, executionId: event.executionId } : state;
    case "contextUsage":
      return { ...state, usage: event.usage };
    case "toolStarted":
      return {
        ...state,
        reviewing: false,
        tools: [
          ...state.tools.filter((t) => t.callId !== event.callId),
          {
            callId: event.callId,
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
    case "toolFinished": {
      const known = state.tools.some((t) => t.callId === event.callId);
      const finished = (t: LiveTool): LiveTool => ({
        ...t,
        exitCode: event.exitCode,
        durationMs: event.durationMs,
        failureClass: event.class,
        ran: event.ran,
        done: true,
        images: event.images,
      });
      return {
        ...state,
        // A call that finished is no longer waiting for approval (answered, or the run stopped).
        approval: state.approval?.callId === event.callId ? null : state.approval,
        tools: known
          ? state.tools.map((t) => (t.callId === event.callId ? finished(t) : t))
          : [
              ...state.tools,
              finished({
                callId: event.callId,
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
    case "todosChanged":
      return { ...state, todos: event.todos };
    case "snapshotTaken":
      return event.todoId && !state.snapshotTodoIds.includes(event.todoId)
        ? { ...state, snapshotTodoIds: [...state.snapshotTodoIds, event.todoId] }
        : state;
    case "awaitingChoice":
      return { ...state, awaiting: { executionId: event.executionId, failureId: event.failureId } };
    case "recovered":
      // A failure reported since (a rollback reports a new one) still waits.
      return state.awaiting === null || state.awaiting.failureId === event.failureId ? { ...state, awaiting: null } : state;
    case "subagentStarted":
      return {
        ...state,
        subagents: [
          ...state.subagents.filter((s) => s.executionId !== event.executionId),
          {
            executionId: event.executionId,
            parentId: event.parentId,
            conversationId: event.conversationId,
            depth: event.depth,
            task: event.task,
            status: "running",
          },
        ],
      };
    case "subagentFinished":
      return {
        ...state,
        subagents: state.subagents.map((s) =>
          s.executionId === event.executionId ? { ...s, status: event.status } : s,
        ),
      };
    case "reviewStarted":
      return isFinalReview(state, event.trigger) ? { ...state, reviewing: true } : state;
    case "reviewFinished":
      return { ...state, reviewing: false, contested: state.contested || event.contested };
    case "warning":
      // A final review that was skipped, stopped or failed says so in a warning, then the run ends.
      return { ...state, reviewing: false, warnings: [...state.warnings.slice(-4), event.message] };
    case "approvalAsked":
      return {
        ...state,
        approval: {
          callId: event.callId,
          server: event.server,
          tool: event.tool,
          arguments: event.arguments,
          readOnly: event.readOnly,
          destructive: event.destructive,
        },
      };
    case "finished":
      return event.executionId === state.executionId ? { ...state, status: event.status, reviewing: false } : state;
    case "runEnded":
      return {
        ...state,
        live: false,
        runId: null,
        text: "",
        reasoning: "",
        status: event.status ?? state.status,
        awaiting: event.status === "awaiting_user" ? state.awaiting : null,
        approval: null,
        reviewing: false,
        stored: state.stored + 1,
      };
    default:
      return state;
  }
}

/**
 * Whether a review that starts now is the run's final one: the runtime's own (`system`) review
 * once the answer is in, while no tool call is running. The review before a risky call is a
 * `system` one too, but its call has started and is not done; a subagent works inside its
 * parent's running call.
 */
function isFinalReview(state: RunState, trigger: string): boolean {
  return trigger === "system" && state.approval === null && state.tools.every((t) => t.done);
}
