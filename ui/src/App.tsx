import { isDefaultTitle, titleFrom } from "./lib/autoTitle";
import { searchWords } from "./lib/marks";
import { useCallback, useEffect, useRef, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { call } from "./api/call";
import { commands, type AppError, type ConversationSummary, type SearchHitView } from "./bindings";
import type { ImportNotice } from "./components/ImportControl";
import { ConversationView } from "./components/ConversationView";
import { EmptyState } from "./components/EmptyState";
import { ErrorBanner } from "./components/ErrorBanner";
import { Header } from "./components/Header";
import { SettingsDialog } from "./components/SettingsDialog";
import { InterruptedNotice } from "./components/InterruptedNotice";
import { SEARCH_INPUT, Sidebar } from "./components/Sidebar";
import type { Mark } from "./components/MessageList";
import { useAppMenu } from "./hooks/useAppMenu";
import { useCompressionNotices } from "./hooks/useCompressionNotices";
import { useConversations } from "./hooks/useConversations";
import { useErrorBanner } from "./hooks/useErrorBanner";
import { useExecutions, useInterrupted } from "./hooks/useExecutions";
import { useFileDrop } from "./hooks/useFileDrop";
import { useMessages } from "./hooks/useMessages";
import { useShortcuts } from "./hooks/useShortcuts";
import { useSidebarStore, useSidebarView, type SidebarStore } from "./hooks/useSidebar";
import { COMPOSER_INPUT } from "./components/Composer";
import { NEW_CONVERSATION_INPUT } from "./components/NewConversationForm";
import { ShortcutsDialog } from "./components/ShortcutsDialog";
import type { WorkspaceAdded } from "./components/WorkspacePanel";
import { ProviderSetup } from "./components/ProviderSetup";
import { idle } from "./run/state";
import { useRuns } from "./run/useRuns";
import { useStoreChanges } from "./hooks/useStoreChanges";

/** How often a run's stored messages may refresh the conversation counts. */
const COUNTS_EVERY_MS = 1000;
/** How often the list is read again for what other processes changed (the CLI, another window). */
const OUTSIDE_EVERY_MS = 4000;

export function App() {
  const { t } = useTranslation();
  const { error, report, dismiss } = useErrorBanner();
  const conv = useConversations(report);
  const [openId, setOpenId] = useState<string | null>(null);
  // A conversation opened from elsewhere than the sidebar (a subagent's), with its task as title.
  const [opened, setOpened] = useState<ConversationSummary | null>(null);
  // Was the conversation open when it was deleted? Undo then reopens it.
  const [reopenAfterUndo, setReopenAfterUndo] = useState(false);
  const runs = useRuns(report);
  const [settingsOpen, setSettingsOpen] = useState(false);
  // Bumped when the settings close, so the meter measures against the provider chosen there.
  const [settingsKey, setSettingsKey] = useState(0);
  const { interrupted, dismiss: dismissInterrupted } = useInterrupted(report);
  const notices = useCompressionNotices(runs.runs);
  // Bumped when what is stored changed here outside a run (a compression, an undo).
  const [edits, setEdits] = useState(0);
  // Not React state of the app: toggling it re-renders the header and the body's frame only.
  const sidebar = useSidebarStore();
  const { fold } = sidebar;
  const [shortcutsOpen, setShortcutsOpen] = useState(false);
  // First start: without a provider nothing can run, so the window says so and offers a setup.
  const [providerCount, setProviderCount] = useState<number | null>(null);
  const [setupOpen, setSetupOpen] = useState(false);
  const countProviders = useCallback(async () => {
    const res = await call(() => commands.providerNames());
    if (res.status === "ok") setProviderCount(res.data.length);
  }, []);
  useEffect(() => {
    void countProviders();
  }, [countProviders, settingsKey]);
  // Bumped by the find shortcut (Ctrl+F, ⌘F on macOS): the open conversation's find bar opens.
  const [findRequest, setFindRequest] = useState(0);
  // Bumped when the shared store says another desktop wrote something.
  const [outside, setOutside] = useState(0);
  // A search hit to open at: its conversation opens on the page around it.
  const [revealRequest, setRevealRequest] = useState<(Mark & { conversationId: string }) | null>(null);

  const open =
    conv.conversations.find((c) => c.id === openId) ?? (opened && opened.id === openId ? opened : null);
  const run = (open && runs.runs[open.id]) || idle;
  const { messages, loading: messagesLoading, ...pages } = useMessages(
    open ? open.id : null,
    report,
    // Also when another process stored messages here: the list's count for it moves, or the
    // shared store said so.
    `${run.stored}:${edits}:${open?.messageCount ?? 0}:${outside}`,
    revealRequest,
  );
  const executions = useExecutions(
    open ? open.id : null,
    `${run.stored}:${run.awaiting?.failureId ?? ""}:${run.subagents.length}:${run.live}:${outside}`,
    report,
  );

  const { create, remove, undoDelete, reload } = conv;

  // The sidebar's counters and order change when a run ends.
  const runLive = run.live;
  const wasLive = useRef(false);
  useEffect(() => {
    if (wasLive.current && !runLive) void reload();
    wasLive.current = runLive;
  }, [runLive, reload]);
  // Outside changes (a CLI import, a run of another process) appear without a reload: the list
  // is read again every few seconds while the window is visible.
  useEffect(() => {
    const timer = window.setInterval(() => {
      if (document.visibilityState === "visible") void reload();
    }, OUTSIDE_EVERY_MS);
    return () => window.clearInterval(timer);
  }, [reload]);
  // On a shared store, at once: the database says what another desktop wrote (a message, a
  // run's event, a review), and the list, the open conversation and its runs are read again.
  useStoreChanges(() => {
    void reload();
    setOutside((n) => n + 1);
  });
  // And while it runs: the counts follow the stored messages, read again at most once a second.
  const storedByRun = run.stored;
  const lastCount = useRef(0);
  useEffect(() => {
    if (!runLive || storedByRun === 0) return;
    const wait = Math.max(0, COUNTS_EVERY_MS - (Date.now() - lastCount.current));
    const timer = window.setTimeout(() => {
      lastCount.current = Date.now();
      void reload();
    }, wait);
    return () => window.clearTimeout(timer);
  }, [storedByRun, runLive, reload]);

  const handleCreate = useCallback(
    async (title: string) => {
      const created = await create(title);
      if ("code" in created) return created;
      setOpenId(created.id);
      // A narrow window's sidebar lies over the conversation: it folds, and the next thing to
      // type is the task, not another title.
      fold();
      window.setTimeout(() => document.getElementById(COMPOSER_INPUT)?.focus(), 0);
      return null;
    },
    [create, fold],
  );

  const [undoError, setUndoError] = useState<AppError | null>(null);
  const handleDelete = useCallback(
    async (id: string) => {
      const wasOpen = id === openId;
      const failed = await remove(id);
      if (failed) return failed;
      setUndoError(null);
      setReopenAfterUndo(wasOpen);
      if (wasOpen) setOpenId(null);
      return null;
    },
    [remove, openId],
  );

  const handleUndo = useCallback(() => {
    void (async () => {
      const restored = await undoDelete();
      if (restored && "code" in restored) {
        setUndoError(restored);
        return;
      }
      setUndoError(null);
      if (restored && reopenAfterUndo) setOpenId(restored.id);
    })();
  }, [undoDelete, reopenAfterUndo]);

  // Opens a conversation the list may not hold yet (a subagent's, started during a run). One
  // deleted since it was linked (a subagent's, deleted on its own) is said, not opened as an
  // empty view of nothing.
  const openConversation = useCallback(
    async (id: string, title: string) => {
      const probe = await call(() => commands.messagePage(id, { kind: "end" }, 1));
      if (probe.status === "error" && probe.error.code === "not_found") {
        report({ code: "not_found", message: t("main.conversationGone", { title }) });
        return;
      }
      const now = new Date().toISOString();
      setOpened({ id, title, messageCount: 0, tokens: 0, createdAt: now, updatedAt: now, parentId: null });
      setOpenId(id);
    },
    [report, t],
  );

  const { rename } = conv;
  // Conversations whose first run was titled by rules, until the model is asked for a title.
  const titleAsks = useRef(new Map<string, { rulesTitle: string; seenLive: boolean }>());
  const send = useCallback(
    async (task: string, rewindFrom: number | null = null) => {
      if (!open) return null;
      const refused = await runs.start(open.id, task, rewindFrom);
      // The first task of a conversation left untitled names it (by rules: its first line).
      const title = titleFrom(task);
      if (refused === null && open.messageCount === 0 && isDefaultTitle(open.title) && title) {
        void rename(open.id, title);
        // Once the first answer is in, the model may title it better (see the effect below).
        titleAsks.current.set(open.id, { rulesTitle: title, seenLive: false });
      }
      return refused;
    },
    [open, runs, rename],
  );

  // The title the model writes from the first exchange, asked when that run ends; only over
  // the title the rules gave (the backend checks it again), never over the analyst's own.
  const allRuns = runs.runs;
  useEffect(() => {
    for (const [id, ask] of titleAsks.current) {
      const state = allRuns[id];
      if (state?.live) titleAsks.current.set(id, { ...ask, seenLive: true });
      else if (ask.seenLive) {
        titleAsks.current.delete(id);
        void call(() => commands.conversationTitleFromModel(id, ask.rulesTitle)).then((res) => {
          if (res.status === "ok" && res.data !== null) void reload();
        });
      }
    }
  }, [allRuns, reload]);

  // Settings, from its button, its shortcut or macOS's menu bar (Settings…): the list of
  // shortcuts it may have been opened from makes way for it.
  const openSettings = () => {
    setShortcutsOpen(false);
    setSettingsOpen(true);
  };
  useAppMenu({ openSettings });

  // Keyboard shortcuts: the fields are found by id once they are on screen (the sidebar may
  // have to unfold first).
  const focusById = (id: string) => window.setTimeout(() => document.getElementById(id)?.focus(), 0);
  useShortcuts({
    newConversation: () => {
      sidebar.show();
      focusById(NEW_CONVERSATION_INPUT);
    },
    focusComposer: () => focusById(COMPOSER_INPUT),
    stopRun: () => {
      if (open && run.live) void runs.stop(open.id);
    },
    findInConversation: () => {
      if (open) setFindRequest((n) => n + 1);
    },
    searchAll: () => {
      sidebar.show();
      focusById(SEARCH_INPUT);
    },
    showShortcuts: () => setShortcutsOpen(true),
    openSettings,
  });

  // Importing conversations: through the open dialog, or files dropped on the window. What
  // failed is said beside the import button, file by file; what worked opens.
  const [importNotice, setImportNotice] = useState<ImportNotice | null>(null);
  const imported = async (conversations: ConversationSummary[], failed: ImportNotice["failed"]) => {
    await reload();
    const last = conversations[conversations.length - 1];
    if (last) setOpenId(last.id);
    setImportNotice(failed.length > 0 || conversations.length > 1 ? { imported: conversations.length, failed } : null);
  };
  const importPicked = async () => {
    const res = await call(() => commands.conversationImport(t("import.dialogTitle"), t("import.filter")));
    if (res.status === "error") setImportNotice({ imported: 0, failed: [{ name: null, error: res.error.message }] });
    else if (res.data) await imported([res.data], []);
  };
  // A drop on an open conversation adds the files to its workspace; anywhere else imports them.
  const [workspaceAdded, setWorkspaceAdded] = useState<WorkspaceAdded | null>(null);
  const addToWorkspace = async (conversationId: string, paths: string[]) => {
    const res = await call(() => commands.workspaceAddDropped(conversationId, paths));
    setWorkspaceAdded({
      conversationId,
      nonce: Date.now(),
      paths: res.status === "ok" ? res.data.map((f) => f.path) : [],
      error: res.status === "ok" ? null : res.error,
    });
  };
  const dropOver = useFileDrop((paths, at) => {
    // Where the page cannot tell (no layout), nothing is a conversation.
    const target = document.elementFromPoint?.(at.x, at.y)?.closest<HTMLElement>("[data-drop-workspace]");
    const conversationId = target?.dataset.dropWorkspace;
    if (conversationId) {
      void addToWorkspace(conversationId, paths);
      return;
    }
    void (async () => {
      const res = await call(() => commands.conversationImportDropped(paths));
      if (res.status === "error") {
        setImportNotice({ imported: 0, failed: [{ name: null, error: res.error.message }] });
        return;
      }
      const done = res.data.flatMap((d) => (d.conversation ? [d.conversation] : []));
      const failed = res.data.flatMap((d) => (d.error !== null ? [{ name: d.name, error: d.error }] : []));
      await imported(done, failed);
    })();
  });

  const openHit = (hit: SearchHitView, query: string) => {
    if (!conv.conversations.some((c) => c.id === hit.conversationId)) {
      openConversation(hit.conversationId, hit.conversationTitle);
    } else setOpenId(hit.conversationId);
    setRevealRequest({ conversationId: hit.conversationId, seq: hit.seq, nonce: Date.now(), words: searchWords(query) });
    fold();
  };

  return (
    <div className="app">
      <SidebarHeader store={sidebar} onSettings={openSettings} onShortcuts={() => setShortcutsOpen(true)} />
      {shortcutsOpen && <ShortcutsDialog onClose={() => setShortcutsOpen(false)} />}
      {setupOpen && (
        <ProviderSetup
          onClose={(added) => {
            setSetupOpen(false);
            if (added) setSettingsKey((n) => n + 1);
            void countProviders();
          }}
        />
      )}
      {settingsOpen && (
        <SettingsDialog
          onClose={() => {
            setSettingsOpen(false);
            setSettingsKey((n) => n + 1);
          }}
        />
      )}
      {error && <ErrorBanner error={error} onDismiss={dismiss} />}
      <InterruptedNotice
        executions={interrupted}
        onDismiss={dismissInterrupted}
        onResume={(e) => {
          dismissInterrupted(e.id);
          setOpenId(e.conversationId);
          void runs.resume(e.conversationId, e.id);
        }}
      />
      <AppBody store={sidebar}>
        <Sidebar
          conversations={conv.conversations}
          loading={conv.loading}
          openId={openId}
          deleted={conv.deleted}
          onCreate={handleCreate}
          onOpen={(id) => {
            setOpenId(id);
            fold();
          }}
          onRename={conv.rename}
          onDelete={handleDelete}
          onUndoDelete={handleUndo}
          undoError={undoError}
          onDismissUndo={conv.dismissUndo}
          onOpenHit={openHit}
          onImport={() => void importPicked()}
          importNotice={importNotice}
          onDismissImportNotice={() => setImportNotice(null)}
        />
        <main className="main-pane" data-testid="main-pane">
          {open ? (
            <ConversationView
              key={open.id}
              conversation={open}
              parent={open.parentId ? (conv.conversations.find((c) => c.id === open.parentId) ?? null) : null}
              messages={messages}
              loading={messagesLoading}
              pages={pages}
              findRequest={findRequest}
              revealRequest={revealRequest?.conversationId === open.id ? revealRequest : null}
              run={run}
              executions={executions}
              refreshKey={run.stored}
              settingsKey={settingsKey}
              report={report}
              onSend={send}
              onStop={() => void runs.stop(open.id)}
              onSkipReview={() => runs.skipReview(open.id)}
              onChoose={(executionId, choice, guidance, figures) => runs.choose(open.id, executionId, choice, guidance, figures)}
              onApprove={(answer) => runs.approve(open.id, answer)}
              onOpenConversation={openConversation}
              compressionNotice={notices.notices[open.id] ?? null}
              onCompressed={(notice) => notices.show(open.id, notice)}
              onDismissCompressionNotice={() => notices.dismiss(open.id)}
              onMessagesChanged={() => setEdits((n) => n + 1)}
              workspaceAdded={workspaceAdded}
            />
          ) : providerCount === 0 ? (
            <EmptyState testId="first-start">
              <p>{t("setup.needed")}</p>
              <button type="button" className="button button-primary" data-testid="first-start-setup" onClick={() => setSetupOpen(true)}>
                {t("setup.open")}
              </button>
            </EmptyState>
          ) : (
            <EmptyState testId="empty-state">
              <p>{conv.conversations.length === 0 && !conv.loading ? t("main.firstConversation") : t("main.empty")}</p>
              {/* Wherever the sidebar is (folded away in a narrow window), this reaches it. */}
              <button
                type="button"
                className="button button-primary"
                data-testid="empty-new-conversation"
                onClick={() => {
                  sidebar.show();
                  window.setTimeout(() => document.getElementById(NEW_CONVERSATION_INPUT)?.focus(), 0);
                }}
              >
                {t("main.newConversation")}
              </button>
            </EmptyState>
          )}
        </main>
      </AppBody>
      {dropOver && (
        <div className="drop-overlay" data-testid="drop-overlay" aria-hidden="true">
          {openId !== null ? (
            <>
              <p>{t("workspace.drop")}</p>
              <p>{t("workspace.dropOnList")}</p>
            </>
          ) : (
            <p>{t("import.drop")}</p>
          )}
        </div>
      )}
    </div>
  );
}

/** The header, with the sidebar's toggle as the sidebar is now. */
function SidebarHeader({ store, onSettings, onShortcuts }: { store: SidebarStore; onSettings: () => void; onShortcuts: () => void }) {
  const { shown } = useSidebarView(store);
  return <Header onSettings={onSettings} onShortcuts={onShortcuts} sidebar={{ shown, onToggle: store.toggle }} />;
}

/** The body's frame, which shows or folds the sidebar: its children are the app's, made by the
 *  app's last render, so a toggle re-renders none of them. */
function AppBody({ store, children }: { store: SidebarStore; children: ReactNode }) {
  const { shown, narrow } = useSidebarView(store);
  return (
    <div className="app-body" data-sidebar={shown ? "shown" : "hidden"} data-narrow={narrow}>
      {children}
    </div>
  );
}
