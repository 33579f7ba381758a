import type { TFunction } from "i18next";
import type {
  AnswerEnd,
  CompactionTrigger,
  CompressionLevel,
  ExecutionStatus,
  FailureClass,
  RiskLevel,
  Severity,
  SummaryLevel,
  TodoStatus,
  WindowSourceView,
} from "../bindings";

/**
 * The words for a union from the Rust side: one translation key per member. Each table is a
 * `Record` over the union, so when Rust adds a member the type check fails here rather than the
 * window showing a raw name; `as const` keeps the keys literal, so `t` checks them against the
 * catalogue too.
 */
const FAILURE_CLASSES = {
  transient: "recovery.classes.transient",
  data: "recovery.classes.data",
  logic: "recovery.classes.logic",
  permission: "recovery.classes.permission",
  system: "recovery.classes.system",
  context_overflow: "recovery.classes.context_overflow",
  cancelled: "recovery.classes.cancelled",
  degenerate: "recovery.classes.degenerate",
  unlinked: "recovery.classes.unlinked",
} as const satisfies Record<FailureClass, string>;

const RISK_LEVELS = {
  none: "review.riskLevels.none",
  low: "review.riskLevels.low",
  medium: "review.riskLevels.medium",
  high: "review.riskLevels.high",
  critical: "review.riskLevels.critical",
} as const satisfies Record<RiskLevel, string>;

const SEVERITIES = {
  low: "review.severities.low",
  medium: "review.severities.medium",
  high: "review.severities.high",
  critical: "review.severities.critical",
} as const satisfies Record<Severity, string>;

const TODO_STATUSES = {
  pending: "plan.status.pending",
  in_progress: "plan.status.in_progress",
  completed: "plan.status.completed",
  failed: "plan.status.failed",
  skipped: "plan.status.skipped",
  cancelled: "plan.status.cancelled",
} as const satisfies Record<TodoStatus, string>;

const EXECUTION_STATUSES = {
  queued: "subagents.status.queued",
  running: "subagents.status.running",
  awaiting_user: "subagents.status.awaiting_user",
  succeeded: "subagents.status.succeeded",
  failed: "subagents.status.failed",
  cancelled: "subagents.status.cancelled",
  interrupted: "subagents.status.interrupted",
} as const satisfies Record<ExecutionStatus, string>;

const COMPRESSION_LEVELS = {
  standard: "compress.levels.standard",
  deep: "compress.levels.deep",
  phase: "compress.levels.phase",
  checkpoint: "compress.levels.checkpoint",
} as const satisfies Record<CompressionLevel, string>;

const COMPACTION_TRIGGERS = {
  auto: "compress.triggers.auto",
  manual: "compress.triggers.manual",
  phase: "compress.triggers.phase",
  checkpoint: "compress.triggers.checkpoint",
  overflow: "compress.triggers.overflow",
} as const satisfies Record<CompactionTrigger, string>;

const SUMMARY_LEVELS = {
  segment: "compress.summaryLevels.segment",
  global: "compress.summaryLevels.global",
} as const satisfies Record<SummaryLevel, string>;

/** An answer that is not whole: its mark under the text and what the mark means. */
const ANSWER_ENDS = {
  cut: { mark: "message.answer.ends.cut", hint: "message.answer.hints.cut" },
  stopped: { mark: "message.answer.ends.stopped", hint: "message.answer.hints.stopped" },
  looping: { mark: "message.answer.ends.looping", hint: "message.answer.hints.looping" },
} as const satisfies Record<Exclude<AnswerEnd, "complete">, { mark: string; hint: string }>;

/** "8,192 tokens, as the server reports": a provider's window with where it comes from. */
const WINDOW_SOURCES = {
  served: "settings.windowSources.served",
  preset: "settings.windowSources.preset",
  configured: "settings.windowSources.configured",
} as const satisfies Record<WindowSourceView, string>;

/** What a failure class is called in the window's language. */
export const failureClassLabel = (t: TFunction, c: FailureClass): string => t(FAILURE_CLASSES[c]);

/** What a review's risk level is called in the window's language. */
export const riskLevelLabel = (t: TFunction, level: RiskLevel): string => t(RISK_LEVELS[level]);

/** What a finding's severity is called in the window's language. */
export const severityLabel = (t: TFunction, severity: Severity): string => t(SEVERITIES[severity]);

/** What a todo's status is called in the window's language. */
export const todoStatusLabel = (t: TFunction, status: TodoStatus): string => t(TODO_STATUSES[status]);

/** What a run's (or a subagent's) status is called in the window's language. */
export const executionStatusLabel = (t: TFunction, status: ExecutionStatus): string => t(EXECUTION_STATUSES[status]);

/** What a compression level is called in the window's language (inside a sentence). */
export const compressionLevelLabel = (t: TFunction, level: CompressionLevel): string => t(COMPRESSION_LEVELS[level]);

/** What set a compaction off, in the window's language. */
export const compactionTriggerLabel = (t: TFunction, trigger: CompactionTrigger): string =>
  t(COMPACTION_TRIGGERS[trigger]);

/** A summary's kind (one segment's, or the global one) in the window's language. */
export const summaryLevelLabel = (t: TFunction, level: SummaryLevel): string => t(SUMMARY_LEVELS[level]);

/**
 * The mark of an answer that is not whole and its tooltip, in the window's language; `null` for
 * a complete one, which carries no mark.
 */
export function answerEndLabel(t: TFunction, ended: AnswerEnd): { mark: string; hint: string } | null {
  if (ended === "complete") return null;
  const keys = ANSWER_ENDS[ended];
  return { mark: t(keys.mark), hint: t(keys.hint) };
}

/** A window of `tokens` (already formatted) with where it comes from, in the window's language. */
export const windowSourceLabel = (t: TFunction, source: WindowSourceView, tokens: string): string =>
  t(WINDOW_SOURCES[source], { tokens });
