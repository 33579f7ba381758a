import { useEffect, useRef, useState } from "react";
import { call } from "../api/call";
import { commands, type MessageView } from "../bindings";
import type { ReportError } from "./useErrorBanner";

/** Messages of the open conversation; refetched whenever the id changes. */
export function useMessages(conversationId: string | null, report: ReportError) {
  const [messages, setMessages] = useState<MessageView[]>([]);
  const [loading, setLoading] = useState(false);
  const reportRef = useRef(report);
  reportRef.current = report;

  useEffect(() => {
    setMessages([]);
    if (conversationId === null) {
      setLoading(false);
      return;
    }
    let alive = true;
    setLoading(true);
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
  }, [conversationId]);

  return { messages, loading };
}
