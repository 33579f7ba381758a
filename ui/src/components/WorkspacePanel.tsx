import { useCallback, useEffect, useEffectEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type WorkspaceFileView, type WorkspaceView } from "../bindings";
import { transferText } from "./SandboxSwitch";
import type { RunFiles } from "./RunHistory";
import { formatBytes } from "../lib/format";
import { FolderNotOpened } from "./FolderNotOpened";
import { InlineError } from "./InlineError";
import { RelativeTime } from "./RelativeTime";
import { WorkspacePreview } from "./WorkspacePreview";

/** Files just added to this workspace (dropped on the conversation, or picked), or why not. */
export type WorkspaceAdded = { conversationId: string; nonce: number; paths: string[]; error: AppError | null };

type Props = {
  conversationId: string;
  /** Changes whenever a call may have written files (a tool finished, a run ended). */
  refreshKey: string;
  /** The newest files the window added here, to name them and read the list again. */
  added: WorkspaceAdded | null;
  /** Told how many files are listed, after each read. */
  onListed?: (count: number) => void;
  /** Brings the result of the call that wrote a file into view (its conversation's, when a
   *  subagent wrote it). */
  onShowCall: (callId: string, conversationId: string | null, messageSeq: number | null) => void;
  /** Opens another conversation: the one whose workspace a subagent's shares. */
  onOpenConversation?: (conversationId: string, title: string) => void;
  /** Lists only the files this run's calls wrote (a row of the run history asked). */
  onlyRun?: RunFiles | null;
  /** Lists every file again. */
  onShowAll?: () => void;
};

/** Whether a run's calls wrote `file`: its writer's answer lies among the run's messages. */
export function writtenByRun(file: WorkspaceFileView, run: RunFiles): boolean {
  const by = file.writtenBy;
  if (by === null || by.by !== "call" || by.messageSeq === null) return false;
  return by.messageSeq >= run.from && (run.to === null || by.messageSeq < run.to);
}

/**
 * The files this conversation's runs wrote (or the analyst added) in its workspace, newest
 * first, each with the call that wrote it: a click opens its preview, the call's name scrolls to
 * its card. Read again after each tool call; on the host and in Docker alike.
 */
export function WorkspacePanel({ conversationId, refreshKey, added, onListed, onShowCall, onOpenConversation, onlyRun = null, onShowAll }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [view, setView] = useState<WorkspaceView | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [all, setAll] = useState(false);
  const [open, setOpen] = useState<WorkspaceFileView | null>(null);
  const [picked, setPicked] = useState<WorkspaceAdded | null>(null);
  const [reads, setReads] = useState(0);
  // The parent hears the count of each listing; a new callback from it does not list again.
  const listed = useEffectEvent((count: number) => onListed?.(count));

  useEffect(() => {
    let alive = true;
    void call(() => commands.workspaceFiles(conversationId, all)).then((res) => {
      if (!alive) return;
      if (res.status === "ok") {
        setView(res.data);
        setError(null);
        listed(res.data.files.length);
      } else setError(res.error);
    });
    return () => {
      alive = false;
    };
  }, [conversationId, all, refreshKey, added?.nonce, reads]);
  useEffect(() => {
    setOpen(null);
    setPicked(null);
  }, [conversationId]);

  const addPicked = useCallback(async () => {
    const res = await call(() => commands.workspaceAddPicked(conversationId, t("workspace.addTitle")));
    if (res.status === "error") setPicked({ conversationId, nonce: Date.now(), paths: [], error: res.error });
    else if (res.data.length > 0) setPicked({ conversationId, nonce: Date.now(), paths: res.data.map((f) => f.path), error: null });
    setReads((n) => n + 1);
  }, [conversationId, t]);
  const [openError, setOpenError] = useState<AppError | null>(null);
  const [unopened, setUnopened] = useState<string | null>(null);
  const openFolder = async () => {
    const res = await call(() => commands.workspaceOpen(conversationId));
    setOpenError(res.status === "error" ? res.error : null);
    setUnopened(res.status === "ok" ? res.data : null);
  };
  // Files left in the host folder while runs work in Docker: copied in on demand.
  const [copying, setCopying] = useState(false);
  const [copied, setCopied] = useState<string | null>(null);
  const [copyError, setCopyError] = useState<AppError | null>(null);
  const copyIn = async () => {
    setCopying(true);
    const res = await call(() => commands.workspaceCopyAcross(conversationId, "host"));
    setCopying(false);
    setCopyError(res.status === "error" ? res.error : null);
    setCopied(res.status === "ok" ? transferText(t, res.data, "docker", lang) : null);
    setReads((n) => n + 1);
  };
  // "Leave them" hides the notice until the count changes (a file added or changed there).
  const leftKey = `decima.leftOnHostDismissed.${conversationId}`;
  const [leftDismissed, setLeftDismissed] = useState<string | null>(() => localStorage.getItem(leftKey));
  useEffect(() => {
    setCopied(null);
    setCopyError(null);
    setLeftDismissed(localStorage.getItem(leftKey));
  }, [conversationId, leftKey]);
  const leaveThem = (count: number) => {
    localStorage.setItem(leftKey, String(count));
    setLeftDismissed(String(count));
  };
  const newest = [added, picked].filter((a): a is WorkspaceAdded => a !== null).sort((a, b) => b.nonce - a.nonce)[0];
  // A failed add says why until the next one; which files the next message names is the
  // store's to say (it gets them named once, whatever the window did in between).
  const addError = newest?.error ?? null;
  const pending = view?.pendingAnnouncement ?? [];
  const files = (view?.files ?? []).filter((f) => onlyRun === null || writtenByRun(f, onlyRun));

  return (
    <section className="side-panel workspace-panel" data-testid="workspace-panel" aria-label={t("workspace.label")}>
      <div className="workspace-heading">
        <h3>{t("workspace.label")}</h3>
        {view && (
          <span className="muted workspace-where" data-testid="workspace-where">
            {view.sandbox === "docker" ? t("workspace.inDocker") : t("workspace.onHost")}
          </span>
        )}
      </div>
      <div className="workspace-actions">
        <button type="button" className="button" data-testid="workspace-add" onClick={() => void addPicked()}>
          {t("workspace.add")}
        </button>
        {view?.canOpenFolder && (
          <button type="button" className="button" data-testid="workspace-open-folder" onClick={() => void openFolder()}>
            {t("workspace.openFolder")}
          </button>
        )}
        <label className="workspace-all">
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} data-testid="workspace-all" />
          {t("workspace.all")}
        </label>
      </div>
      {view && view.owner === null && (
        <p className="muted workspace-location" data-testid="workspace-location">
          {view.location !== null ? (
            <>
              {t("workspace.hostFolder")} <code title={view.location}>{view.location}</code>
            </>
          ) : (
            t("workspace.container")
          )}
        </p>
      )}
      {view && view.leftOnHost > 0 && leftDismissed !== String(view.leftOnHost) && (
        <div className="workspace-left-behind" role="status" data-testid="workspace-left-behind">
          <span>{t("workspace.leftOnHost", { count: view.leftOnHost })}</span>
          <span className="workspace-left-actions">
            <button type="button" className="button button-small button-primary" data-testid="workspace-copy-in" disabled={copying} onClick={() => void copyIn()}>
              {t("workspace.copyIn")}
            </button>
            <button type="button" className="button button-small" data-testid="workspace-leave" onClick={() => leaveThem(view.leftOnHost)}>
              {t("workspace.leave")}
            </button>
          </span>
        </div>
      )}
      {copied && (
        <p className="workspace-added" role="status" data-testid="workspace-copied">
          {copied}
        </p>
      )}
      {copyError && <InlineError error={copyError} testId="workspace-copy-error" />}
      {view?.owner && (
        <p className="muted workspace-owner" data-testid="workspace-owner">
          {t("workspace.sharedWith")}{" "}
          <button type="button" className="link-button" data-testid="workspace-owner-open" onClick={() => onOpenConversation?.(view.owner!.conversationId, view.owner!.title)}>
            {view.owner.title}
          </button>
          {t("workspace.sharedWithAfter")}
        </p>
      )}
      {openError && <InlineError error={openError} testId="workspace-open-error" />}
      {unopened && <FolderNotOpened path={unopened} testId="workspace-folder-path" />}
      {addError && <InlineError error={addError} testId="workspace-add-error" />}
      {pending.length > 0 && (
        <p className="workspace-added" data-testid="workspace-added" role="status">
          {t("workspace.added", { count: pending.length, names: pending.join(", ") })}
        </p>
      )}
      {onlyRun && (
        <p className="workspace-run-filter" role="status" data-testid="workspace-run-filter">
          <span title={onlyRun.task}>{t("workspace.ofRun", { count: files.length, task: onlyRun.task })}</span>{" "}
          <button type="button" className="link-button" data-testid="workspace-show-all" onClick={onShowAll}>
            {t("workspace.showAll")}
          </button>
        </p>
      )}
      {error && <InlineError error={error} testId="workspace-error" />}
      {view && files.length === 0 && !error && onlyRun === null && (
        <p className="muted" data-testid="workspace-empty">
          {all ? t("workspace.emptyAll") : t("workspace.empty")}
        </p>
      )}
      <ul className="workspace-files" data-testid="workspace-files">
        {files.map((f) => (
          <li key={f.path} className="workspace-file" data-testid="workspace-file" data-path={f.path}>
            <button
              type="button"
              className="link-button workspace-file-name"
              title={f.path}
              data-testid="workspace-file-open"
              onClick={() => setOpen(f)}
            >
              {f.path}
            </button>
            <span className="muted workspace-file-meta">
              {formatBytes(f.size ?? 0, lang)} · <RelativeTime iso={new Date(f.modifiedMs ?? 0).toISOString()} />
            </span>
            <Writer file={f} onShowCall={onShowCall} />
          </li>
        ))}
      </ul>
      {open && (
        <WorkspacePreview conversationId={conversationId} file={open} onClose={() => setOpen(null)} />
      )}
    </section>
  );
}

/** Who wrote a file: the call (a link to its result in the conversation) or the analyst. */
function Writer({ file, onShowCall }: { file: WorkspaceFileView; onShowCall: Props["onShowCall"] }) {
  const { t } = useTranslation();
  const by = file.writtenBy;
  if (by === null) return null;
  if (by.by === "analyst") {
    return (
      <span className="muted workspace-writer" data-testid="workspace-writer">
        {/* Its own name is said only when the workspace's differs (a name taken: "q3 (2).csv"). */}
        {by.name === file.path ? t("workspace.byYouPlain") : t("workspace.byYou", { name: by.name })}
      </span>
    );
  }
  return (
    <button
      type="button"
      className="link-button muted workspace-writer"
      data-testid="workspace-writer"
      data-call-id={by.callId}
      title={t("workspace.showCall")}
      onClick={() => onShowCall(by.callId, by.conversationId, by.messageSeq)}
    >
      {t("workspace.byCall", { tool: by.tool })}
    </button>
  );
}
