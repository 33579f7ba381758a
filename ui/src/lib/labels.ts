import type { TFunction } from "i18next";
import type {
  CompactionTrigger,
  CompressionLevel,
  ExecutionStatus,
  FailureClass,
  RiskLevel,
  Severity,
  SummaryLevel,
  TodoStatus,
} from "../bindings";

/** A switch over a union from the Rust side ends here: when Rust adds a member that a switch
 *  does not name, the type check fails at that switch rather than the window showing a raw
 *  name. */
export function unhandled(value: never): never {
  throw new Error(`a value the window does not know: ${String(value)}`);
}

/** What a failure class is called in the window's language. */
export function failureClassLabel(t: TFunction, c: FailureClass): string {
  switch (c) {
    case "transient":
      return t("recovery.classes.transient");
    case "data":
      return t("recovery.classes.data");
    case "logic":
      return t("recovery.classes.logic");
    case "permission":
      return t("recovery.classes.permission");
    case "system":
      return t("recovery.classes.system");
    case "context_overflow":
      return t("recovery.classes.context_overflow");
    case "cancelled":
      return t("recovery.classes.cancelled");
    default:
      return unhandled(c);
  }
}

/** What a review's risk level is called in the window's language. */
export function riskLevelLabel(t: TFunction, level: RiskLevel): string {
  switch (level) {
    case "none":
      return t("review.riskLevels.none");
    case "low":
      return t("review.riskLevels.low");
    case "medium":
      return t("review.riskLevels.medium");
    case "high":
      return t("review.riskLevels.high");
    case "critical":
      return t("review.riskLevels.critical");
    default:
      return unhandled(level);
  }
}

/** What a finding's severity is called in the window's language. */
export function severityLabel(t: TFunction, severity: Severity): string {
  switch (severity) {
    case "low":
      return t("review.severities.low");
    case "medium":
      return t("review.severities.medium");
    case "high":
      return t("review.severities.high");
    case "critical":
      return t("review.severities.critical");
    default:
      return unhandled(severity);
  }
}

/** What a todo's status is called in the window's language. */
export function todoStatusLabel(t: TFunction, status: TodoStatus): string {
  switch (status) {
    case "pending":
      return t("plan.status.pending");
    case "in_progress":
      return t("plan.status.in_progress");
    case "completed":
      return t("plan.status.completed");
    case "failed":
      return t("plan.status.failed");
    case "skipped":
      return t("plan.status.skipped");
    case "cancelled":
      return t("plan.status.cancelled");
    default:
      return unhandled(status);
  }
}

/** What a run's (or a subagent's) status is called in the window's language. */
export function executionStatusLabel(t: TFunction, status: ExecutionStatus): string {
  switch (status) {
    case "queued":
      return t("subagents.status.queued");
    case "running":
      return t("subagents.status.running");
    case "awaiting_user":
      return t("subagents.status.awaiting_user");
    case "succeeded":
      return t("subagents.status.succeeded");
    case "failed":
      return t("subagents.status.failed");
    case "cancelled":
      return t("subagents.status.cancelled");
    case "interrupted":
      return t("subagents.status.interrupted");
    default:
      return unhandled(status);
  }
}

/** What a compression level is called in the window's language (inside a sentence). */
export function compressionLevelLabel(t: TFunction, level: CompressionLevel): string {
  switch (level) {
    case "standard":
      return t("compress.levels.standard");
    case "deep":
      return t("compress.levels.deep");
    case "phase":
      return t("compress.levels.phase");
    case "checkpoint":
      return t("compress.levels.checkpoint");
    default:
      return unhandled(level);
  }
}

/** What set a compaction off, in the window's language. */
export function compactionTriggerLabel(t: TFunction, trigger: CompactionTrigger): string {
  switch (trigger) {
    case "auto":
      return t("compress.triggers.auto");
    case "manual":
      return t("compress.triggers.manual");
    case "phase":
      return t("compress.triggers.phase");
    case "checkpoint":
      return t("compress.triggers.checkpoint");
    case "overflow":
      return t("compress.triggers.overflow");
    default:
      return unhandled(trigger);
  }
}

/** A summary's kind (one segment's, or the global one) in the window's language. */
export function summaryLevelLabel(t: TFunction, level: SummaryLevel): string {
  switch (level) {
    case "segment":
      return t("compress.summaryLevels.segment");
    case "global":
      return t("compress.summaryLevels.global");
    default:
      return unhandled(level);
  }
}
