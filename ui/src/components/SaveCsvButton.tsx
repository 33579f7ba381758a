import { useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError } from "../bindings";
import { formatBytes } from "../lib/format";
import { InlineError } from "./InlineError";

/**
 * Save as CSV, beside Copy as TSV: the table as the window shows it (filtered and sorted) goes
 * to a file the analyst picks in the system's save dialog, and the window says where it went.
 */
export function SaveCsvButton({ csv, name }: { csv: () => string; name: string }) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const save = async () => {
    setSaving(true);
    setSaved(null);
    const res = await call(() => commands.tableSaveCsv(csv(), name, t("table.saveTitle")));
    setSaving(false);
    setError(res.status === "error" ? res.error : null);
    if (res.status === "ok" && res.data) setSaved(t("table.saved", { path: res.data.path, size: formatBytes(res.data.bytes ?? 0, lang) }));
  };
  return (
    <>
      <button
        type="button"
        className="link-button"
        data-testid="table-save-csv"
        disabled={saving}
        onClick={(e) => {
          e.stopPropagation();
          void save();
        }}
      >
        {t("table.saveCsv")}
      </button>
      {saved && (
        <span className="muted table-saved" role="status" data-testid="table-saved" title={saved}>
          {saved}
        </span>
      )}
      {error && <InlineError error={error} testId="table-save-error" />}
    </>
  );
}
