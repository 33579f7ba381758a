import { useEffect, useState } from "react";
import { call } from "../api/call";
import { commands, type ExecutionView } from "../bindings";
import type { ReportError } from "./useErrorBanner";
import { useLatest } from "./useLatest";

/** The open conversation's executions (newest root first, each followed by its subagents). */
export function useExecutions(conversationId: string | null, refreshKey: string | number, report: ReportError) {
  const [executions, setExecutions] = useState<ExecutionView[]>([]);
  const reportRef = useLatest(report);

  useEffect(() => {
    if (conversationId === null) {
      setExecutions([]);
      return;
    }
    let alive = true;
    void (async () => {
      const res = await call(() => commands.executionList(conversationId));
      if (!alive) return;
      if (res.status === "ok") setExecutions(res.data);
      else reportRef.current(res.error);
    })();
    return () => {
      alive = false;
    };
  }, [conversationId, refreshKey, reportRef]);

  return executions;
}

/** The executions left interrupted by a crash, offered for resume once at start-up. */
export function useInterrupted(report: ReportError) {
  const [interrupted, setInterrupted] = useState<ExecutionView[]>([]);
  const reportRef = useLatest(report);
  useEffect(() => {
    void (async () => {
      const res = await call(() => commands.executionInterrupted());
      if (res.status === "ok") setInterrupted(res.data);
      else reportRef.current(res.error);
    })();
  }, [reportRef]);
  return { interrupted, dismiss: (id: string) => setInterrupted((all) => all.filter((e) => e.id !== id)) };
}
