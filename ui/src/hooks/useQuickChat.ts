import { useCallback, useEffect, useState } from "react";
import { call } from "../api/call";
import { commands, type AppError } from "../bindings";

/**
 * Whether this conversation's messages are quick chats (no tools, plan or review), read from
 * its run options and saved there on change: remembered per conversation, across restarts.
 */
export function useQuickChat(conversationId: string, settingsKey: unknown) {
  const [quick, setQuick] = useState(false);
  const [error, setError] = useState<AppError | null>(null);
  useEffect(() => {
    let alive = true;
    void call(() => commands.runOptionsGet(conversationId)).then((res) => {
      if (!alive) return;
      if (res.status === "ok") setQuick(res.data.quick);
    });
    return () => {
      alive = false;
    };
  }, [conversationId, settingsKey]);
  const change = useCallback(
    async (on: boolean) => {
      setQuick(on);
      const res = await call(() => commands.runOptionsSetQuick(conversationId, on));
      if (res.status === "ok") {
        setQuick(res.data.quick);
        setError(null);
      } else {
        setQuick(!on);
        setError(res.error);
      }
    },
    [conversationId],
  );
  return { quick, setQuick: change, error };
}
