import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type ProviderPresetView } from "../bindings";
import { useModal } from "../hooks/useModal";
import { InlineError } from "./InlineError";
import { probeSentence } from "./SettingsDialog";

type Kind = "openai" | "anthropic";

type Props = {
  /** Closes the setup; `added` is true once a provider works and is the default. */
  onClose: (added: boolean) => void;
};

/**
 * The first-start setup: the kind of server, a preset, its address and key, then the model
 * from the server's own list where it gives one. "Add and test" stores the provider (its key
 * in the keyring), sends it a tiny request, and makes it the one runs use once it answers.
 */
export function ProviderSetup({ onClose }: Props) {
  const { t } = useTranslation();
  const dialog = useRef<HTMLDivElement>(null);
  useModal(dialog, () => onClose(false));
  const [presets, setPresets] = useState<ProviderPresetView[]>([]);
  const [kind, setKind] = useState<Kind>("openai");
  const [preset, setPreset] = useState("");
  const [name, setName] = useState("");
  const [baseUrl, setBaseUrl] = useState("");
  const [apiKey, setApiKey] = useState("");
  const [model, setModel] = useState("");
  const [models, setModels] = useState<string[] | null>(null);
  const [listing, setListing] = useState<string | null>(null);
  const [busy, setBusy] = useState<"models" | "adding" | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const [added, setAdded] = useState<string | null>(null);

  useEffect(() => {
    void (async () => {
      const res = await call(() => commands.providerPresets());
      if (res.status === "ok") setPresets(res.data);
    })();
  }, []);

  const choosePreset = (chosen: string) => {
    setPreset(chosen);
    const p = presets.find((x) => x.name === chosen);
    if (p) {
      setBaseUrl(p.baseUrl);
      setModel(p.defaultModel);
      if (name === "") setName(p.name);
    }
    setModels(null);
    setListing(null);
  };

  const findModels = async () => {
    setBusy("models");
    setListing(null);
    const res = await call(() => commands.providerModels(kind, baseUrl, apiKey || null));
    setBusy(null);
    if (res.status === "error") {
      setListing(res.error.message);
      setModels(null);
    } else if (res.data.failure) {
      setListing(probeSentence(res.data.failure, t));
      setModels(null);
    } else {
      setModels(res.data.models);
      if (res.data.models.length > 0 && !res.data.models.includes(model)) setModel(res.data.models[0] ?? "");
    }
  };

  const addAndTest = async () => {
    setBusy("adding");
    setError(null);
    setFailed(null);
    // A provider added on an earlier try (which then failed its test) is replaced.
    if (added !== null) await call(() => commands.providerRemove(added));
    const res = await call(() =>
      commands.providerAdd(name.trim(), preset || null, preset ? null : kind, baseUrl || null, model || null, null, apiKey || null),
    );
    if (res.status === "error") {
      setBusy(null);
      setError(res.error);
      return;
    }
    setAdded(res.data.name);
    const probe = await call(() => commands.providerTest(res.data.name));
    if (probe.status === "error" || probe.data.failure) {
      setBusy(null);
      setFailed(probe.status === "error" ? probe.error.message : probeSentence(probe.data.failure!, t));
      return;
    }
    const current = await call(() => commands.settingsGet());
    const sandbox = current.status === "ok" ? current.data.sandbox : "host";
    const reviewer = current.status === "ok" ? current.data.reviewerProvider : null;
    const saved = await call(() => commands.settingsSave(res.data.name, reviewer, sandbox));
    setBusy(null);
    if (saved.status === "error") setError(saved.error);
    else onClose(true);
  };

  const shown = presets.filter((p) => p.kind === kind);
  return (
    <div className="overlay">
      <div ref={dialog} className="dialog setup-dialog" role="dialog" aria-modal="true" aria-label={t("setup.title")} data-testid="provider-setup">
        <h2>{t("setup.title")}</h2>
        <p className="muted">{t("setup.intro")}</p>
        <div className="segmented" role="radiogroup" aria-label={t("setup.kind")}>
          {(["openai", "anthropic"] as const).map((k) => (
            <button
              key={k}
              type="button"
              role="radio"
              aria-checked={kind === k}
              className={kind === k ? "segmented-item active" : "segmented-item"}
              data-testid={`setup-kind-${k}`}
              onClick={() => {
                setKind(k);
                setPreset("");
                setModels(null);
              }}
            >
              {t(`setup.kinds.${k}`)}
            </button>
          ))}
        </div>
        <div className="settings-form">
          <label className="settings-field">
            <span>{t("setup.preset")}</span>
            <select data-testid="setup-preset" value={preset} onChange={(e) => choosePreset(e.target.value)}>
              <option value="">{t("setup.custom")}</option>
              {shown.map((p) => (
                <option key={p.name} value={p.name}>
                  {p.label}
                </option>
              ))}
            </select>
          </label>
          <label className="settings-field">
            <span>{t("settings.name")}</span>
            <input data-testid="setup-name" value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <label className="settings-field">
            <span>{t("settings.baseUrl")}</span>
            <input
              data-testid="setup-base-url"
              placeholder={kind === "openai" ? "http://localhost:11434/v1" : "https://api.anthropic.com"}
              value={baseUrl}
              onChange={(e) => {
                setBaseUrl(e.target.value);
                setModels(null);
              }}
            />
          </label>
          <label className="settings-field">
            <span>{t("settings.apiKey")}</span>
            <input type="password" autoComplete="off" data-testid="setup-key" value={apiKey} onChange={(e) => setApiKey(e.target.value)} />
          </label>
          <label className="settings-field">
            <span>{t("settings.model")}</span>
            {models && models.length > 0 ? (
              <select data-testid="setup-model" value={model} onChange={(e) => setModel(e.target.value)}>
                {models.map((m) => (
                  <option key={m} value={m}>
                    {m}
                  </option>
                ))}
              </select>
            ) : (
              <input data-testid="setup-model" value={model} onChange={(e) => setModel(e.target.value)} />
            )}
          </label>
          <div className="settings-field">
            <span aria-hidden="true">&nbsp;</span>
            <button type="button" className="button" data-testid="setup-find-models" disabled={busy !== null || baseUrl.trim() === ""} onClick={() => void findModels()}>
              {busy === "models" ? t("setup.finding") : t("setup.findModels")}
            </button>
          </div>
        </div>
        {listing && (
          <p className="muted" role="status" data-testid="setup-models-note">
            {t("setup.noList", { reason: listing })}
          </p>
        )}
        {models && (
          <p className="muted" role="status" data-testid="setup-models-found">
            {t("setup.found", { count: models.length })}
          </p>
        )}
        <InlineError error={error} testId="setup-error" />
        {failed && (
          <p className="provider-test-result test-failed" role="alert" data-testid="setup-test-failed">
            <span aria-hidden="true">✗</span> {failed}
          </p>
        )}
        <div className="dialog-actions">
          <button type="button" className="button" onClick={() => onClose(false)}>
            {t("setup.later")}
          </button>
          <button
            type="button"
            className="button button-primary"
            data-testid="setup-add"
            disabled={busy !== null || name.trim() === "" || (preset === "" && (baseUrl.trim() === "" || model.trim() === ""))}
            onClick={() => void addAndTest()}
          >
            {busy === "adding" ? t("setup.testing") : t("setup.add")}
          </button>
        </div>
      </div>
    </div>
  );
}
