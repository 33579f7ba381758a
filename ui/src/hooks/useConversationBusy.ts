import { useCallback, useEffect, useRef, useState } from "react";
import { call } from "../api/call";
import { commands, type ConversationBusy } from "../bindings";

/** How often the open conversation is checked while this window runs nothing in it. */
export const BUSY_POLL_MS = 3000;

/**
 * What keeps the open conversation busy, if anything: a run (in this window or another
 * process, the CLI included), a run waiting for a choice, a chat turn or a compression. It is
 * read when the conversation opens, when this window's run in it ends, and every few seconds
 * while this window has no live run in it, so a run started elsewhere disables Send here too.
 */
export function useConversationBusy(conversationId: string, live: boolean) {
  const [busy, setBusy] = useState<ConversationBusy | null>(null);
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);

  /** Reads it now; resolves to what it read (null: free, or unknown after an error). */
  const refresh = useCallback(async () => {
    const res = await call(() => commands.conversationBusy(conversationId));
    if (!alive.current) return null;
    // A failed check changes nothing: the commands themselves refuse a busy conversation.
    if (res.status === "error") return null;
    setBusy(res.data);
    return res.data;
  }, [conversationId]);

  // On opening, and whenever this window's run in it ends.
  useEffect(() => {
    if (!live) void refresh();
  }, [live, refresh]);

  // Meanwhile, every few seconds, unless this window's own run is live there.
  useEffect(() => {
    if (live) return;
    const timer = window.setInterval(() => void refresh(), BUSY_POLL_MS);
    return () => window.clearInterval(timer);
  }, [live, refresh]);

  return { busy: live ? null : busy, refresh };
}
