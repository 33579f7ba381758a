import { useCallback, useEffect, useRef, useState } from "react";
import { call } from "../api/call";
import { commands, type MessageView } from "../bindings";
import type { ReportError } from "./useErrorBanner";

/** Messages fetched at a time: a few screens. A conversation opens with its newest page. */
export const PAGE = 200;
/** The most one refresh re-reads; older pages are read again when scrolled to. */
const MAX_REFRESH = 1000;

/**
 * The open conversation's messages, read from its end upwards a page at a time, so a
 * conversation of 100k messages opens as fast as a short one. Refetched when the id changes;
 * `refreshKey` re-reads what is loaded (a run stored messages, or rolled some back).
 */
export function useMessages(conversationId: string | null, report: ReportError, refreshKey: unknown = 0) {
  const [messages, setMessages] = useState<MessageView[]>([]);
  const [hasMore, setHasMore] = useState(false);
  const [loading, setLoading] = useState(false);
  const reportRef = useRef(report);
  reportRef.current = report;
  const shownRef = useRef<string | null>(null);
  const loadedRef = useRef(0);
  loadedRef.current = messages.length;
  const busyRef = useRef(false);

  useEffect(() => {
    // A refresh of the same conversation keeps what is shown until the new list arrives.
    const sameConversation = shownRef.current === conversationId;
    shownRef.current = conversationId;
    if (!sameConversation) {
      setMessages([]);
      setHasMore(false);
      loadedRef.current = 0;
    }
    if (conversationId === null) {
      setLoading(false);
      return;
    }
    let alive = true;
    if (!sameConversation) setLoading(true);
    const limit = Math.min(Math.max(PAGE, loadedRef.current), MAX_REFRESH);
    void (async () => {
      const res = await call(() => commands.messagePage(conversationId, null, limit));
      if (!alive) return; // another conversation was opened meanwhile
      if (res.status === "ok") {
        setMessages(res.data.messages);
        setHasMore(res.data.hasMore);
      } else reportRef.current(res.error);
      setLoading(false);
    })();
    return () => {
      alive = false;
    };
  }, [conversationId, refreshKey]);

  /** Reads the page above the first loaded message; true when it added any. */
  const loadEarlier = useCallback(async () => {
    const first = messages[0];
    if (conversationId === null || !hasMore || !first || busyRef.current) return false;
    busyRef.current = true;
    const res = await call(() => commands.messagePage(conversationId, first.seq, PAGE));
    busyRef.current = false;
    if (shownRef.current !== conversationId) return false;
    if (res.status === "error") {
      reportRef.current(res.error);
      return false;
    }
    setMessages((now) => [...res.data.messages.filter((m) => m.seq < (now[0]?.seq ?? Infinity)), ...now]);
    setHasMore(res.data.hasMore);
    return res.data.messages.length > 0;
  }, [conversationId, hasMore, messages]);

  return { messages, loading, hasMore, loadEarlier };
}
