import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/call";
import { commands, type SandboxImageView, type SandboxStatus } from "../../bindings";
import { InlineError } from "../InlineError";
import { DockerEngine } from "./DockerEngine";
import { SandboxImage } from "./SandboxImage";
import { useSectionSave, type WorkbenchSettingsState } from "./useWorkbenchSettings";

const SANDBOXES = ["host", "docker"] as const;

/**
 * Where new runs' tools run (the host's workspace folder or a Docker container), the Docker
 * engine and whether it answers, and the sandbox image. The choice is saved at once; the
 * engine's status is read when Settings opens and again when the engine changes.
 */
export function SandboxSettings({ workbench }: { workbench: WorkbenchSettingsState }) {
  const { t } = useTranslation();
  const { settings, loadError } = workbench;
  const { saved, error, saveNow } = useSectionSave(workbench.save);
  const [sandbox, setSandbox] = useState<SandboxStatus | null>(null);
  /** The image as the last build here left it (the status was read when the dialog opened). */
  const [built, setBuilt] = useState<SandboxImageView | null>(null);
  const [asked, setAsked] = useState(0);

  useEffect(() => {
    let alive = true;
    setSandbox(null);
    void call(() => commands.sandboxStatus()).then((s) => {
      if (alive && s.status === "ok") setSandbox(s.data);
    });
    return () => {
      alive = false;
    };
  }, [asked]);

  return (
    <section aria-label={t("settings.sandbox")} data-testid="sandbox-settings">
      <h3>{t("settings.sandbox")}</h3>
      {settings !== null && (
        <div className="segmented" role="radiogroup" aria-label={t("settings.sandbox")} data-testid="sandbox-choice">
          {SANDBOXES.map((kind) => (
            <button
              key={kind}
              type="button"
              role="radio"
              aria-checked={settings.sandbox === kind}
              data-sandbox={kind}
              className={settings.sandbox === kind ? "segmented-item active" : "segmented-item"}
              onClick={() => void saveNow({ ...settings, sandbox: kind })}
            >
              {t(`settings.sandboxes.${kind}`)}
            </button>
          ))}
        </div>
      )}
      {settings !== null && (
        <p className="muted" data-testid="python-kernel" data-offered={settings.sandbox === "docker"}>
          {settings.sandbox === "docker" ? t("settings.pythonDocker") : t("settings.pythonHost")}
        </p>
      )}
      <InlineError error={error ?? loadError} testId="sandbox-settings-error" />
      {saved && (
        <p className="muted" role="status" data-testid="sandbox-settings-saved">
          {t("settings.saved")}
        </p>
      )}
      {sandbox !== null && (
        <p className="muted" data-testid="host-shell">
          {sandbox.hostShell === null
            ? t("settings.hostShellMissing", { detail: sandbox.hostShellProblem })
            : t("settings.hostShell", { shell: sandbox.hostShell })}
        </p>
      )}
      <DockerEngine onSaved={() => setAsked((n) => n + 1)} />
      <p data-testid="sandbox-status">
        {sandbox === null ? "…" : sandbox.dockerAvailable ? t("settings.dockerOk") : t("settings.dockerMissing", { detail: sandbox.detail })}
      </p>
      {sandbox?.image && <SandboxImage image={built ?? sandbox.image} onBuilt={setBuilt} />}
    </section>
  );
}
