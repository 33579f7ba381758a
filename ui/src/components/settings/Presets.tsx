import { useEffect, useState, type DragEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/call";
import { commands, type AppError, type PresetView } from "../../bindings";
import { FilePicker } from "../FilePicker";
import { InlineError } from "../InlineError";

/**
 * The preset library conversations take their prompt from: SillyTavern cards and prompt
 * presets, imported by a drop or the file picker, and listed.
 */
export function Presets() {
  const { t } = useTranslation();
  const [presets, setPresets] = useState<PresetView[]>([]);
  const [imported, setImported] = useState<string | null>(null);
  const [loadError, setLoadError] = useState<AppError | null>(null);
  const [importError, setImportError] = useState<AppError | null>(null);

  const load = async () => {
    const res = await call(() => commands.presetList());
    if (res.status === "ok") setPresets(res.data);
    setLoadError(res.status === "error" ? res.error : null);
  };
  useEffect(() => {
    void load();
    // Loaded once when the dialog opens.
  }, []);

  const importFile = async (file: File) => {
    const bytes = Array.from(new Uint8Array(await file.arrayBuffer()));
    const res = await call(() => commands.presetImport(file.name, bytes));
    setImportError(res.status === "error" ? res.error : null);
    if (res.status === "ok") {
      setImported(res.data.name);
      await load();
    }
  };
  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault();
    const file = e.dataTransfer.files[0];
    if (file) void importFile(file);
  };

  return (
    <section aria-label={t("settings.presets")}>
      <h3>{t("settings.presets")}</h3>
      <InlineError error={loadError} testId="preset-load-error" />
      <div className="drop-zone" data-testid="preset-drop" onDragOver={(e) => e.preventDefault()} onDrop={onDrop}>
        <FilePicker label={t("settings.importHint")} accept=".json,.png" testId="preset-file" onFile={(file) => void importFile(file)} />
      </div>
      <InlineError error={importError} testId="preset-import-error" />
      {imported && <p data-testid="preset-imported">{t("settings.imported", { name: imported })}</p>}
      <ul className="settings-list">
        {presets.map((p) => (
          <li key={p.id} data-testid="preset">
            {p.name} <span className="muted">({p.kind})</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
