import { useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type ExportView, type ReportView } from "../bindings";
import { usePopover } from "../hooks/usePopover";

const FORMATS = ["md", "jsonl", "text", "ipynb"] as const;
/** A report of the newest answer: one self-contained HTML file, or a folder. */
const REPORTS = ["html", "folder"] as const;

/** The analyst's local date, `YYYY-MM-DD`, for the exported file's default name. */
export function localDate(now = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/**
 * Exports the conversation to a file the analyst picks in the system's save dialog, then offers
 * to open it or show it in its folder. A failure shows here, where the export was asked for.
 */
export function ExportMenu({ conversationId }: { conversationId: string }) {
  const { t } = useTranslation();
  const { open, setOpen, toggle, container, trigger } = usePopover();
  const [done, setDone] = useState<ExportView | null>(null);
  const [report, setReport] = useState<ReportView | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [busy, setBusy] = useState(false);

  async function exportAs(format: (typeof FORMATS)[number]) {
    setOpen(false);
    setError(null);
    setDone(null);
    setReport(null);
    setBusy(true);
    const res = await call(() => commands.conversationExport(conversationId, format, localDate(), t("export.dialogTitle")));
    setBusy(false);
    if (res.status === "error") setError(res.error);
    else if (res.data) setDone(res.data);
  }

  async function exportReport(format: (typeof REPORTS)[number]) {
    setOpen(false);
    setError(null);
    setDone(null);
    setReport(null);
    setBusy(true);
    const res = await call(() => commands.conversationExportReport(conversationId, format, localDate(), t("export.reportTitle")));
    setBusy(false);
    if (res.status === "error") setError(res.error);
    else if (res.data) setReport(res.data);
  }

  async function follow(action: "open" | "reveal", path: string) {
    const res = await call(() => (action === "open" ? commands.exportOpen(path) : commands.exportReveal(path)));
    setError(res.status === "error" ? res.error : null);
  }

  return (
    <div className="export-menu" data-testid="export-menu" ref={container}>
      <button
        type="button"
        className="button"
        ref={trigger}
        aria-haspopup="menu"
        aria-expanded={open}
        disabled={busy}
        data-testid="export-button"
        onClick={toggle}
      >
        {busy ? t("export.busy") : t("export.label")}
      </button>
      {open && (
        <div className="export-options" role="menu" aria-label={t("export.label")}>
          {FORMATS.map((format) => (
            <button
              key={format}
              type="button"
              role="menuitem"
              className="button button-small"
              data-testid={`export-${format}`}
              onClick={() => void exportAs(format)}
            >
              {t(`export.formats.${format}`)}
            </button>
          ))}
          <span className="export-options-heading" role="presentation">
            {t("export.reportHeading")}
          </span>
          {REPORTS.map((format) => (
            <button
              key={format}
              type="button"
              role="menuitem"
              className="button button-small"
              data-testid={`export-report-${format}`}
              title={t("export.reportHint")}
              onClick={() => void exportReport(format)}
            >
              {t(`export.reports.${format}`)}
            </button>
          ))}
        </div>
      )}
      {(done || report || error) && (
        <div className="export-result" role={error ? "alert" : "status"} data-testid={error ? "export-error" : "export-done"}>
          {done && !error && <p className="export-path">{t("export.done", { path: done.path, count: done.messages })}</p>}
          {report && !error && (
            <p className="export-path" data-testid="report-done">
              {t("export.reportDone", { path: report.path, charts: report.charts, tables: report.tables, findings: report.findings })}
              {report.leftOut.length > 0 && ` ${t("export.reportLeftOut", { count: report.leftOut.length, names: report.leftOut.join("; ") })}`}
            </p>
          )}
          {error && <p className="export-failed">{t("export.failed", { message: error.message })}</p>}
          <div className="export-actions">
            {(done ?? report) && (
              <>
                <button type="button" className="button button-small" data-testid="export-open" onClick={() => void follow("open", (done ?? report)!.path)}>
                  {t("export.open")}
                </button>
                <button type="button" className="button button-small" data-testid="export-reveal" onClick={() => void follow("reveal", (done ?? report)!.path)}>
                  {t("export.reveal")}
                </button>
              </>
            )}
            <button
              type="button"
              className="button button-small"
              data-testid="export-dismiss"
              onClick={() => {
                setDone(null);
                setReport(null);
                setError(null);
              }}
            >
              {t("export.dismiss")}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
