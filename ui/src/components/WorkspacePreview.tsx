import { DataTable } from "./DataTable";
import { lazy, Suspense, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type FilePreview, type SavedFileView, type WorkspaceFileView } from "../bindings";
import { useModal } from "../hooks/useModal";
import { formatBytes } from "../lib/format";
import { InlineError } from "./InlineError";

const MarkdownText = lazy(() => import("./MarkdownText"));

type Props = { conversationId: string; file: WorkspaceFileView; onClose: () => void };

/**
 * One workspace file, shown as what it is: an image (click for full size), the first rows of a
 * CSV or a workbook, Markdown rendered, or text; anything else says why it is not shown. "Save
 * as" copies it out of the workspace (the container's too) to a place the analyst picks.
 */
export function WorkspacePreview({ conversationId, file, onClose }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const dialog = useRef<HTMLDivElement>(null);
  useModal(dialog, onClose);
  const [preview, setPreview] = useState<FilePreview | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [full, setFull] = useState(false);
  const [saved, setSaved] = useState<SavedFileView | null>(null);
  const [saveError, setSaveError] = useState<AppError | null>(null);
  useEffect(() => {
    let alive = true;
    void call(() => commands.workspacePreview(conversationId, file.path)).then((res) => {
      if (!alive) return;
      if (res.status === "ok") setPreview(res.data);
      else setError(res.error);
    });
    return () => {
      alive = false;
    };
  }, [conversationId, file.path]);
  const saveAs = async () => {
    const res = await call(() => commands.workspaceSaveAs(conversationId, file.path, t("workspace.saveTitle")));
    if (res.status === "error") {
      setSaveError(res.error);
      return;
    }
    setSaveError(null);
    if (res.data) setSaved(res.data);
  };

  return (
    <div className="overlay">
      <div
        ref={dialog}
        className="dialog workspace-preview"
        role="dialog"
        aria-modal="true"
        aria-label={file.path}
        data-testid="workspace-preview"
      >
        <div className="workspace-preview-head">
          <h2 title={file.path}>{file.path}</h2>
          {file.size !== null && <span className="muted">{formatBytes(file.size, lang)}</span>}
        </div>
        <div className="workspace-preview-body">
          {error && <InlineError error={error} testId="workspace-preview-error" />}
          {!error && preview === null && <p className="muted">{t("main.loading")}</p>}
          {preview && <Shown preview={preview} path={file.path} full={full} onToggle={() => setFull((f) => !f)} />}
        </div>
        {saveError && <InlineError error={saveError} testId="workspace-save-error" />}
        {saved && (
          <p className="muted" role="status" data-testid="workspace-saved">
            {t("workspace.saved", { path: saved.path, size: formatBytes(saved.bytes ?? 0, lang) })}
          </p>
        )}
        <div className="dialog-actions">
          <button type="button" className="button" data-testid="workspace-save-as" onClick={() => void saveAs()}>
            {t("workspace.saveAs")}
          </button>
          <button type="button" className="button button-primary" data-testid="workspace-preview-close" onClick={onClose}>
            {t("workspace.close")}
          </button>
        </div>
      </div>
    </div>
  );
}

function Shown({ preview, path, full, onToggle }: { preview: FilePreview; path: string; full: boolean; onToggle: () => void }) {
  const { t } = useTranslation();
  switch (preview.kind) {
    case "image":
      return (
        <button
          type="button"
          className={full ? "workspace-image full" : "workspace-image"}
          title={full ? t("toolImages.shrink") : t("toolImages.enlarge")}
          onClick={onToggle}
        >
          <img src={`data:${preview.mediaType};base64,${preview.data}`} alt={path} data-testid="workspace-preview-image" />
        </button>
      );
    case "table":
      return (
        <div className="workspace-table-wrap">
          {preview.sheet !== null && (
            <p className="muted" data-testid="workspace-preview-sheet">
              {t("workspace.sheet", { name: preview.sheet, count: preview.sheets })}
            </p>
          )}
          <DataTable columns={preview.columns} rows={preview.rows} more={preview.more} name={path.split("/").pop()?.replace(/\.[^.]*$/, "") ?? "table"} />
          {preview.more && <p className="muted">{t("workspace.moreRows", { count: preview.rows.length })}</p>}
          {preview.columnsTotal !== null && (
            <p className="muted" data-testid="workspace-preview-columns">
              {t("workspace.moreColumns", { shown: preview.columns.length, total: preview.columnsTotal })}
            </p>
          )}
        </div>
      );
    case "markdown":
      return (
        <div className="workspace-markdown markdown" data-testid="workspace-preview-markdown">
          <Suspense fallback={<pre className="workspace-text">{preview.text}</pre>}>
            <MarkdownText text={preview.text} />
          </Suspense>
          {preview.truncated && <p className="muted">{t("workspace.truncated")}</p>}
        </div>
      );
    case "text":
      return (
        <>
          <pre className="workspace-text" data-testid="workspace-preview-text">
            {preview.text}
          </pre>
          {preview.truncated && <p className="muted">{t("workspace.truncated")}</p>}
        </>
      );
    case "none":
      return (
        <p className="muted" data-testid="workspace-preview-none">
          {t(`workspace.notShown.${preview.reason}`)}
        </p>
      );
  }
}
