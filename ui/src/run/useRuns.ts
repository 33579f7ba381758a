import { Channel } from "@tauri-apps/api/core";
import { useCallback, useState } from "react";
import { call, type Result } from "../api/call";
import { commands, type AppError, type Approval, type Resolution, type RunUpdate } from "../bindings";
import type { ReportError } from "../hooks/useErrorBanner";
import { idle, receive, type RunState } from "./state";
import { useLatest } from "../hooks/useLatest";

/** What the analyst can answer a failure with; a failure offers some of these (`suggestions`). */
export type Choice = Resolution;
/** The answers to an MCP call waiting for approval. */
export type ApprovalAnswer = Approval;

/**
 * The runs of every conversation, kept while the window lives so switching conversations
 * never loses one. Each run's events arrive through its own channel, in order.
 */
export function useRuns(report: ReportError) {
  const [runs, setRuns] = useState<Record<string, RunState>>({});
  const reportRef = useLatest(report);

  const apply = useCallback((conversationId: string, update: RunUpdate) => {
    setRuns((all) => ({ ...all, [conversationId]: receive(all[conversationId] ?? idle, update) }));
    if (update.kind === "ended" && update.error) reportRef.current(update.error);
  }, [reportRef]);

  /**
   * Opens a channel for a run of `conversationId` and starts it with `begin`. Resolves to the
   * error that kept it from starting, if any; the caller says where it is shown.
   */
  const launch = useCallback(
    async (
      conversationId: string,
      begin: (channel: Channel<RunUpdate>) => Promise<Result<string, AppError>>,
      keep: boolean,
    ) => {
      const channel = new Channel<RunUpdate>();
      channel.onmessage = (update) => apply(conversationId, update);
      setRuns((all) => {
        const before = all[conversationId] ?? idle;
        const base: RunState = keep
          ? { ...before, awaiting: null }
          : { ...idle, stored: before.stored, usage: before.usage };
        return { ...all, [conversationId]: { ...base, live: true } };
      });
      const res = await call(() => begin(channel));
      if (res.status === "ok") {
        setRuns((all) => ({
          ...all,
          [conversationId]: { ...(all[conversationId] ?? idle), runId: res.data },
        }));
        return null;
      }
      setRuns((all) => ({ ...all, [conversationId]: { ...(all[conversationId] ?? idle), live: false } }));
      return res.error;
    },
    [apply],
  );

  /**
   * Starts a run on `task`; resolves to the error that refused it (e.g. `busy`), if any. With
   * `rewindFrom` (the seq of the last message the analyst sent), that message and what followed
   * it are set aside first: edit and run again, or regenerate.
   */
  const start = useCallback(
    (conversationId: string, task: string, rewindFrom: number | null = null) =>
      launch(conversationId, (ch) => commands.runStart(conversationId, task, rewindFrom, ch), false),
    [launch],
  );

  const resume = useCallback(
    async (conversationId: string, executionId: string) => {
      const error = await launch(conversationId, (ch) => commands.executionResume(executionId, ch), false);
      if (error) reportRef.current(error);
    },
    [launch, reportRef],
  );

  const stop = useCallback(
    async (conversationId: string) => {
      const runId = runs[conversationId]?.runId;
      if (!runId) return;
      const res = await call(() => commands.runStop(runId));
      if (res.status === "error") reportRef.current(res.error);
    },
    [reportRef, runs],
  );

  /**
   * Skips the final review of the run working in `conversationId`: its answer stands,
   * unreviewed, and the run ends at once (the runtime says so in a warning). A review that
   * ended meanwhile leaves nothing to skip.
   */
  const skipReview = useCallback(
    async (conversationId: string) => {
      const executionId = runs[conversationId]?.executionId;
      if (!executionId) return;
      const res = await call(() => commands.runSkipReview(executionId));
      if (res.status === "error") reportRef.current(res.error);
    },
    [reportRef, runs],
  );

  /**
   * Answers a failure: through the live run that waits, else by recovering the execution.
   * Resolves to the error that refused the choice (one the failure does not offer is
   * `invalid_input`), if any: the failure then still waits, and the recovery panel says why.
   */
  const choose = useCallback(
    async (
      conversationId: string,
      executionId: string,
      choice: Choice,
      guidance: string | null = null,
      figures: { figures: number[]; value: string | null } = { figures: [], value: null },
    ): Promise<AppError | null> => {
      const run = runs[conversationId];
      if (run?.live && run.runId) {
        const runId = run.runId;
        const answered = run.awaiting?.failureId ?? null;
        const res = await call(() => commands.runChoose(runId, choice, guidance, figures.figures, figures.value));
        if (res.status === "error") return res.error;
        // The panel closes at once; a failure reported since (after a rollback) keeps it open.
        setRuns((all) => {
          const now = all[conversationId] ?? idle;
          return now.awaiting?.failureId === answered ? { ...all, [conversationId]: { ...now, awaiting: null } } : all;
        });
        return null;
      }
      return launch(conversationId, (ch) => commands.executionRecover(executionId, choice, guidance, figures.figures, figures.value, ch), true);
    },
    [runs, launch],
  );

  /**
   * Answers the MCP call a live run waits to have approved. Resolves to the error that refused
   * the answer (the run no longer waits), if any.
   */
  const approve = useCallback(
    async (conversationId: string, answer: ApprovalAnswer): Promise<AppError | null> => {
      const run = runs[conversationId];
      if (!run?.live || !run.runId || !run.approval) return null;
      const runId = run.runId;
      const asked = run.approval.callId;
      const res = await call(() => commands.runApprove(runId, answer));
      setRuns((all) => {
        const now = all[conversationId] ?? idle;
        return now.approval?.callId === asked ? { ...all, [conversationId]: { ...now, approval: null } } : all;
      });
      return res.status === "error" ? res.error : null;
    },
    [runs],
  );

  return { runs, start, stop, skipReview, choose, resume, approve };
}
