import type { ExecutionView, FailureReport, ReviewView } from "../bindings";

export function failureReport(overrides: Partial<FailureReport> = {}): FailureReport {
  return {
    id: "f1",
    class: "data",
    message: "the model marked \"Gather the invoices\" failed: the ledger is missing",
    todoTitle: "Gather the invoices",
    phase: "Gather",
    position: 1,
    planLen: 2,
    trigger: "todo_failed",
    likelyCauses: ["a file the step needs is missing"],
    call: null,
    rolledBack: true,
    filesRestored: 2,
    filesRemoved: 1,
    messagesRemoved: 6,
    suggestions: ["replan", "skip", "retry", "abort"],
    resolution: null,
    resolvedBy: null,
    changes: null,
    servedWindow: null,
    figures: [],
    ...overrides,
  };
}

export function execution(overrides: Partial<ExecutionView> & { id: string; conversationId: string }): ExecutionView {
  return {
    parentId: null,
    depth: 0,
    task: "Count the invoices",
    status: "running",
    result: null,
    error: null,
    contested: false,
    todos: [],
    snapshotTodoIds: [],
    waitingOn: null,
    createdAt: "2026-01-01T10:00:00Z",
    ending: null,
    conversationDeleted: false,
    startedAt: "2026-01-01T10:00:00Z",
    finishedAt: null,
    modelCalls: 0,
    tokensIn: 0,
    tokensOut: 0,
    cacheReadTokens: 0,
    cachedPercent: 0,
    costUsd: null,
    compressions: 0,
    reviewRisk: null,
    firstSeq: null,
    answered: [],
    ...overrides,
  };
}

export function review(overrides: Partial<ReviewView> = {}): ReviewView {
  return {
    id: "r1",
    riskLevel: "high",
    summary: "The count ignores the ledger.",
    reviewType: "full",
    focus: null,
    findings: [
      {
        id: "fd1",
        title: "The ledger was never checked",
        severity: "high",
        argument: "The early note says invoices must match the ledger.",
        evidenceSeqs: [2],
        recommendation: "Restore the ledger and compare.",
      },
    ],
    openQuestions: ["Where did the ledger go?"],
    earlierOpenFindings: [],
    cached: false,
    trigger: "user",
    createdAt: "2026-03-01T12:00:00Z",
    reviewedThroughSeq: 2,
    ...overrides,
  };
}
