import { Channel } from "@tauri-apps/api/core";
import { useCallback, useRef, useState } from "react";
import { call, type Result } from "../api/call";
import { commands, type AppError, type RunEvent } from "../bindings";
import type { ReportError } from "../hooks/useErrorBanner";
import { idle, reduce, type RunState } from "./state";

export type Choice = "retry" | "skip" | "replan" | "abort";

/**
 * The runs of every conversation, kept while the window lives so switching conversations
 * never loses one. Each run's events arrive through its own channel, in order.
 */
export function useRuns(report: ReportError) {
  const [runs, setRuns] = useState<Record<string, RunState>>({});
  const reportRef = useRef(report);
  reportRef.current = report;

  const apply = useCallback((conversationId: string, event: RunEvent) => {
    setRuns((all) => ({ ...all, [conversationId]: reduce(all[conversationId] ?? idle, event) }));
    if (event.type === "runEnded" && event.error) reportRef.current(event.error);
  }, []);

  /** Opens a channel for a run of `conversationId` and starts it with `begin`. */
  const launch = useCallback(
    async (
      conversationId: string,
      begin: (channel: Channel<RunEvent>) => Promise<Result<string, AppError>>,
      keep: boolean,
    ) => {
      const channel = new Channel<RunEvent>();
      channel.onmessage = (event) => apply(conversationId, event);
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
        return true;
      }
      setRuns((all) => ({ ...all, [conversationId]: { ...(all[conversationId] ?? idle), live: false } }));
      reportRef.current(res.error);
      return false;
    },
    [apply],
  );

  const start = useCallback(
    (conversationId: string, task: string) =>
      launch(conversationId, (ch) => commands.runStart(conversationId, task, ch), false),
    [launch],
  );

  const resume = useCallback(
    (conversationId: string, executionId: string) =>
      launch(conversationId, (ch) => commands.executionResume(executionId, ch), false),
    [launch],
  );

  const stop = useCallback(
    async (conversationId: string) => {
      const runId = runs[conversationId]?.runId;
      if (!runId) return;
      const res = await call(() => commands.runStop(runId));
      if (res.status === "error") reportRef.current(res.error);
    },
    [runs],
  );

  /** Answers a failure: through the live run that waits, else by recovering the execution. */
  const choose = useCallback(
    async (conversationId: string, executionId: string, choice: Choice) => {
      const run = runs[conversationId];
      if (run?.live && run.runId) {
        const runId = run.runId;
        const res = await call(() => commands.runChoose(runId, choice));
        if (res.status === "error") {
          reportRef.current(res.error);
          return false;
        }
        setRuns((all) => ({ ...all, [conversationId]: { ...(all[conversationId] ?? idle), awaiting: null } }));
        return true;
      }
      return launch(conversationId, (ch) => commands.executionRecover(executionId, choice, ch), true);
    },
    [runs, launch],
  );

  return { runs, start, stop, choose, resume };
}
