import { useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands } from "../bindings";
import type { ReportError } from "../hooks/useErrorBanner";

const FORMATS = ["md", "jsonl", "text"] as const;

/** Exports the conversation to the data directory's exports/ and says where. */
export function ExportMenu({ conversationId, report }: { conversationId: string; report: ReportError }) {
  const { t } = useTranslation();
  const [done, setDone] = useState<string | null>(null);
  return (
    <details className="export-menu" data-testid="export-menu">
      <summary className="button">{t("export.label")}</summary>
      <div className="export-options">
        {FORMATS.map((format) => (
          <button
            key={format}
            type="button"
            className="button button-small"
            data-testid={`export-${format}`}
            onClick={() => {
              void (async () => {
                const res = await call(() => commands.conversationExport(conversationId, format));
                if (res.status === "ok") setDone(t("export.done", { path: res.data.path, count: res.data.messages }));
                else report(res.error);
              })();
            }}
          >
            {format}
          </button>
        ))}
        {done && <p data-testid="export-done">{done}</p>}
      </div>
    </details>
  );
}
