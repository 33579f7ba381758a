import { useEffect, useRef, useState } from "react";
import { call } from "../api/call";
import { commands, type MessageView } from "../bindings";
import type { ReportError } from "./useErrorBanner";

/** Messages of the open conversation; refetched whenever the id or `refreshKey` changes. */
export function useMessages(conversationId: string | null, report: ReportError, refreshKey = 0) {
  const [messages, setMessages] = useState<MessageView[]>([]);
  const [loading, setLoading] = useState(false);
  const reportRef = useRef(report);
  reportRef.current = report;

  const shownRef = useRef<string | null>(null);

  useEffect(() => {
    // A refresh of the same conversation keeps what is shown until the new list arrives.
    const sameConversation = shownRef.current === conversationId;
    shownRef.current = conversationId;
    if (!sameConversation) setMessages([]);
    if (conversationId === null) {
      setLoading(false);
      return;
    }
    let alive = true;
    if (!sameConversation) setLoading(true);
    void (async () => {
      const res = await call(() => commands.messageList(conversationId));
      if (!alive) return; // another conversation was opened meanwhile
      if (res.status === "ok") setMessages(res.data);
      else reportRef.current(res.error);
      setLoading(false);
    })();
    return () => {
      alive = false;
    };
  }, [conversationId, refreshKey]);

  return { messages, loading };
}
