import { useCallback, useEffect, useState } from "react";
import { call } from "../api/call";
import { commands, type AppError, type ConversationSummary } from "../bindings";
import type { ReportError } from "./useErrorBanner";
import { useLatest } from "./useLatest";

export type DeletedConversation = {
  conversation: ConversationSummary;
  /** Where it stood in the list, so undo can put it back in place. */
  index: number;
};

/**
 * The sidebar's conversation list, kept in the order the backend returns
 * (newest updated first) and patched locally after each successful command.
 * Nothing changes locally when a command fails; the error is returned to the control that
 * asked, which shows it there (only a failed read of the list goes to the banner).
 */
export function useConversations(report: ReportError) {
  const [conversations, setConversations] = useState<ConversationSummary[]>([]);
  const [loading, setLoading] = useState(true);
  const [deleted, setDeleted] = useState<DeletedConversation | null>(null);

  const reportRef = useLatest(report);
  const listRef = useLatest(conversations);

  const reload = useCallback(async () => {
    setLoading(true);
    const res = await call(() => commands.conversationList());
    if (res.status === "ok") setConversations(res.data);
    else reportRef.current(res.error);
    setLoading(false);
  }, [reportRef]);

  useEffect(() => {
    void reload();
  }, [reload]);

  const create = useCallback(async (title: string): Promise<ConversationSummary | AppError> => {
    const res = await call(() => commands.conversationCreate(title));
    if (res.status === "error") return res.error;
    const created = res.data;
    setConversations((list) => [created, ...list.filter((c) => c.id !== created.id)]);
    return created;
  }, []);

  const rename = useCallback(async (id: string, title: string): Promise<AppError | null> => {
    const res = await call(() => commands.conversationRename(id, title));
    if (res.status === "error") return res.error;
    const renamed = res.data;
    setConversations((list) => list.map((c) => (c.id === renamed.id ? renamed : c)));
    return null;
  }, []);

  const remove = useCallback(async (id: string): Promise<AppError | null> => {
    const index = listRef.current.findIndex((c) => c.id === id);
    const conversation = listRef.current[index];
    if (!conversation) return null;
    const res = await call(() => commands.conversationDelete(id));
    if (res.status === "error") return res.error;
    setConversations((list) => list.filter((c) => c.id !== id));
    setDeleted({ conversation, index });
    return null;
  }, [listRef]);

  const undoDelete = useCallback(async (): Promise<ConversationSummary | AppError | null> => {
    if (!deleted) return null;
    const res = await call(() => commands.conversationRestore(deleted.conversation.id));
    if (res.status === "error") return res.error;
    const restored = res.data;
    setConversations((list) => {
      const rest = list.filter((c) => c.id !== restored.id);
      const at = Math.min(deleted.index, rest.length);
      return [...rest.slice(0, at), restored, ...rest.slice(at)];
    });
    setDeleted(null);
    return restored;
  }, [deleted]);

  const dismissUndo = useCallback(() => setDeleted(null), []);

  return { conversations, loading, deleted, reload, create, rename, remove, undoDelete, dismissUndo };
}
