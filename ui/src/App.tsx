import { useCallback, useState } from "react";
import { useTranslation } from "react-i18next";
import { ConversationView } from "./components/ConversationView";
import { EmptyState } from "./components/EmptyState";
import { ErrorBanner } from "./components/ErrorBanner";
import { Header } from "./components/Header";
import { Sidebar } from "./components/Sidebar";
import { useConversations } from "./hooks/useConversations";
import { useErrorBanner } from "./hooks/useErrorBanner";
import { useMessages } from "./hooks/useMessages";

export function App() {
  const { t } = useTranslation();
  const { error, report, dismiss } = useErrorBanner();
  const conv = useConversations(report);
  const [openId, setOpenId] = useState<string | null>(null);
  // Was the conversation open when it was deleted? Undo then reopens it.
  const [reopenAfterUndo, setReopenAfterUndo] = useState(false);

  const open = conv.conversations.find((c) => c.id === openId) ?? null;
  const { messages, loading: messagesLoading } = useMessages(open ? open.id : null, report);

  const { create, remove, undoDelete } = conv;

  const handleCreate = useCallback(
    async (title: string) => {
      const created = await create(title);
      if (created) setOpenId(created.id);
      return created !== null;
    },
    [create],
  );

  const handleDelete = useCallback(
    (id: string) => {
      void (async () => {
        const wasOpen = id === openId;
        if (await remove(id)) {
          setReopenAfterUndo(wasOpen);
          if (wasOpen) setOpenId(null);
        }
      })();
    },
    [remove, openId],
  );

  const handleUndo = useCallback(() => {
    void (async () => {
      const restored = await undoDelete();
      if (restored && reopenAfterUndo) setOpenId(restored.id);
    })();
  }, [undoDelete, reopenAfterUndo]);

  return (
    <div className="app">
      <Header />
      {error && <ErrorBanner error={error} onDismiss={dismiss} />}
      <div className="app-body">
        <Sidebar
          conversations={conv.conversations}
          loading={conv.loading}
          openId={openId}
          deleted={conv.deleted}
          onCreate={handleCreate}
          onOpen={setOpenId}
          onRename={conv.rename}
          onDelete={handleDelete}
          onUndoDelete={handleUndo}
          onDismissUndo={conv.dismissUndo}
        />
        <main className="main-pane" data-testid="main-pane">
          {open ? (
            <ConversationView conversation={open} messages={messages} loading={messagesLoading} />
          ) : (
            <EmptyState testId="empty-state">{t("main.empty")}</EmptyState>
          )}
        </main>
      </div>
    </div>
  );
}
