import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/call";
import { commands, type AppError, type ProviderView, type SandboxImageView, type SandboxStatus, type WorkbenchSettings } from "../../bindings";
import { InlineError } from "../InlineError";
import { DockerEngine } from "./DockerEngine";
import { SandboxImage } from "./SandboxImage";

const SANDBOXES = ["host", "docker"] as const;

type Props = {
  providers: ProviderView[];
  sandbox: SandboxStatus | null;
  /** The engine was changed: its status is read again. */
  onEngineChanged: () => void;
};

/**
 * What new runs use: the provider, the tenth man's provider, and where tools run. Each change
 * is saved at once (the runtime checks the names); a run already going keeps its own.
 */
export function RunSettings({ providers, sandbox, onEngineChanged }: Props) {
  const { t } = useTranslation();
  const [settings, setSettings] = useState<WorkbenchSettings | null>(null);
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<AppError | null>(null);
  /** The image as the last build here left it (the status was read when the dialog opened). */
  const [built, setBuilt] = useState<SandboxImageView | null>(null);

  useEffect(() => {
    let alive = true;
    void (async () => {
      const res = await call(() => commands.settingsGet());
      if (!alive) return;
      if (res.status === "ok") setSettings(res.data);
      else setError(res.error);
    })();
    return () => {
      alive = false;
    };
    // Read once when the dialog opens.
  }, []);

  const save = async (next: WorkbenchSettings) => {
    setSaved(false);
    const res = await call(() => commands.settingsSave(next.provider, next.reviewerProvider, next.sandbox));
    setError(res.status === "error" ? res.error : null);
    if (res.status === "ok") {
      setSettings(res.data);
      setSaved(true);
    }
  };

  if (settings === null) {
    return error ? (
      <section aria-label={t("settings.runs")} data-testid="run-settings">
        <h3>{t("settings.runs")}</h3>
        <InlineError error={error} testId="run-settings-error" />
      </section>
    ) : null;
  }
  const choices = providers.map((p) => p.name);
  // A saved name the list no longer has stays visible, so the user sees what needs fixing.
  const withSaved = (name: string | null) => (name !== null && !choices.includes(name) ? [...choices, name] : choices);

  return (
    <section aria-label={t("settings.runs")} data-testid="run-settings">
      <h3>{t("settings.runs")}</h3>
      <ProviderSelect
        testId="run-provider"
        label={t("settings.runProvider")}
        none={choices.length > 1 ? t("settings.noDefault") : t("settings.automatic")}
        value={settings.provider}
        choices={withSaved(settings.provider)}
        onChange={(provider) => void save({ ...settings, provider })}
      />
      <ProviderSelect
        testId="reviewer-provider"
        label={t("settings.reviewerProvider")}
        none={t("settings.sameAsRun")}
        value={settings.reviewerProvider}
        choices={withSaved(settings.reviewerProvider)}
        onChange={(reviewerProvider) => void save({ ...settings, reviewerProvider })}
      />
      <div className="segmented" role="radiogroup" aria-label={t("settings.sandbox")} data-testid="sandbox-choice">
        {SANDBOXES.map((kind) => (
          <button
            key={kind}
            type="button"
            role="radio"
            aria-checked={settings.sandbox === kind}
            data-sandbox={kind}
            className={settings.sandbox === kind ? "segmented-item active" : "segmented-item"}
            onClick={() => void save({ ...settings, sandbox: kind })}
          >
            {t(`settings.sandboxes.${kind}`)}
          </button>
        ))}
      </div>
      <DockerEngine onSaved={onEngineChanged} />
      <p data-testid="sandbox-status">
        {sandbox === null ? "…" : sandbox.dockerAvailable ? t("settings.dockerOk") : t("settings.dockerMissing", { detail: sandbox.detail })}
      </p>
      {sandbox?.image && <SandboxImage image={built ?? sandbox.image} onBuilt={setBuilt} />}
      <InlineError error={error} testId="run-settings-error" />
      {saved && (
        <p className="muted" role="status" data-testid="run-settings-saved">
          {t("settings.saved")}
        </p>
      )}
    </section>
  );
}

/** A provider by name, or none (`null`), which the runtime reads as its default. */
function ProviderSelect(props: {
  testId: string;
  label: string;
  none: string;
  value: string | null;
  choices: string[];
  onChange: (name: string | null) => void;
}) {
  return (
    <label className="settings-field">
      <span>{props.label}</span>
      <select data-testid={props.testId} value={props.value ?? ""} onChange={(e) => props.onChange(e.target.value || null)}>
        <option value="">{props.none}</option>
        {props.choices.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
    </label>
  );
}
