import { useEffect, useState } from "react";
import { call } from "../../api/call";
import { commands, type AppError, type WorkbenchSettings } from "../../bindings";

/** The settings new runs use, with the error reading them, and a save of the whole. */
export type WorkbenchSettingsState = {
  settings: WorkbenchSettings | null;
  loadError: AppError | null;
  /** Saves `next` whole; resolves to the runtime's refusal, or null once saved. */
  save: (next: WorkbenchSettings) => Promise<AppError | null>;
};

/**
 * The provider, the tenth man's provider and the sandbox are one record the runtime saves whole,
 * while Settings shows them in two sections (Runs, Sandbox): both read and save it here, so a
 * change in one never writes back what the other had before.
 */
export function useWorkbenchSettings(): WorkbenchSettingsState {
  const [settings, setSettings] = useState<WorkbenchSettings | null>(null);
  const [loadError, setLoadError] = useState<AppError | null>(null);
  useEffect(() => {
    let alive = true;
    void call(() => commands.settingsGet()).then((res) => {
      if (!alive) return;
      if (res.status === "ok") setSettings(res.data);
      else setLoadError(res.error);
    });
    return () => {
      alive = false;
    };
    // Read once when the dialog opens.
  }, []);

  const save = async (next: WorkbenchSettings) => {
    const res = await call(() => commands.settingsSave(next.provider, next.reviewerProvider, next.sandbox));
    if (res.status === "error") return res.error;
    setSettings(res.data);
    return null;
  };
  return { settings, loadError, save };
}

/**
 * One section's saves of the settings: whether its last change was saved, or why it was
 * refused, said in that section (the other section's saves are not its news).
 */
export function useSectionSave(save: WorkbenchSettingsState["save"]) {
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<AppError | null>(null);
  const saveNow = async (next: WorkbenchSettings) => {
    setSaved(false);
    const refused = await save(next);
    setError(refused);
    setSaved(refused === null);
  };
  return { saved, error, saveNow };
}
