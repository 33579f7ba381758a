import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import {
  commands,
  type AppError,
  type ProbeFailure,
  type ProviderPresetView,
  type ProviderProbe,
  type ProviderView,
} from "../bindings";
import { useLatest } from "../hooks/useLatest";
import { useModal } from "../hooks/useModal";
import { InlineError } from "./InlineError";
import { probeSentence } from "./SettingsDialog";
import { ProbeFacts, probeHasFacts } from "./settings/ProbeFacts";

type Kind = "openai" | "anthropic";

type Props = {
  /** Closes the setup; `added` is true once a provider works and is the default. */
  onClose: (added: boolean) => void;
};

/**
 * The first-start setup: the kind of server, a preset, its address and key, then the model
 * from the server's own list where it gives one. "Add and test" stores the provider (its key
 * in the keyring), sends it a tiny request, and makes it the one runs use once it answers.
 * What the test learned (the window and where it comes from, a warning about it, whether the
 * server holds answers to a schema) is shown before the setup closes; where the server does not
 * say its window, the window can be set there.
 */
export function ProviderSetup({ onClose }: Props) {
  const { t } = useTranslation();
  const dialog = useRef<HTMLDivElement>(null);
  // What a passed test learned, shown before the setup closes. The provider is in use by then:
  // closing the setup keeps it.
  const [passed, setPassed] = useState<{ probe: ProviderProbe; provider: ProviderView } | null>(null);
  const passedRef = useLatest(passed !== null);
  useModal(dialog, () => onClose(passedRef.current));
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
  // Kept as data, worded when shown: a language switch rewords it.
  const [failed, setFailed] = useState<ProbeFailure | AppError | null>(null);
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
      setFailed(probe.status === "error" ? probe.error : probe.data.failure);
      return;
    }
    const current = await call(() => commands.settingsGet());
    const sandbox = current.status === "ok" ? current.data.sandbox : "host";
    const reviewer = current.status === "ok" ? current.data.reviewerProvider : null;
    const saved = await call(() => commands.settingsSave(res.data.name, reviewer, sandbox));
    setBusy(null);
    if (saved.status === "error") setError(saved.error);
    else if (probeHasFacts(probe.data)) setPassed({ probe: probe.data, provider: res.data });
    else onClose(true);
  };

  // Ollama speaks its own API but is one of the OpenAI-compatible kind's servers here.
  const shown = presets.filter((p) => (kind === "anthropic" ? p.kind === "anthropic" : p.kind !== "anthropic"));
  return (
    <div className="overlay">
      <div ref={dialog} className="dialog setup-dialog" role="dialog" aria-modal="true" aria-label={t("setup.title")} data-testid="provider-setup">
        <h2>{t("setup.title")}</h2>
        {passed ? (
          <SetupPassed passed={passed} onDone={() => onClose(true)} />
        ) : (
          <>
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
                <span aria-hidden="true">✗</span> {"kind" in failed ? probeSentence(failed, t) : failed.message}
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
          </>
        )}
      </div>
    </div>
  );
}

/**
 * The provider answered and runs use it now: what the test learned, the window to set where the
 * server does not say it, and Done.
 */
function SetupPassed({ passed, onDone }: { passed: { probe: ProviderProbe; provider: ProviderView }; onDone: () => void }) {
  const { t } = useTranslation();
  const { probe, provider } = passed;
  const unknown = probe.contextWindowSource === "preset";
  const [windowDraft, setWindowDraft] = useState(String(probe.contextWindow ?? provider.contextWindow));
  const [error, setError] = useState<AppError | null>(null);
  const [saving, setSaving] = useState(false);
  // The Add button it replaces had the focus: Done takes it, inside the dialog.
  const doneButton = useRef<HTMLButtonElement>(null);
  useEffect(() => doneButton.current?.focus(), []);

  const done = async () => {
    const tokens = Number(windowDraft);
    if (unknown && tokens > 0 && tokens !== (probe.contextWindow ?? provider.contextWindow)) {
      setSaving(true);
      const res = await call(() => commands.providerUpdate(provider.name, provider.baseUrl, provider.model, tokens, null));
      setSaving(false);
      if (res.status === "error") {
        setError(res.error);
        return;
      }
    }
    onDone();
  };

  return (
    <>
      <div className="provider-test-result test-passed" role="status" data-testid="setup-passed">
        <span aria-hidden="true">✓</span> {t("setup.passed", { ms: probe.elapsedMs })}
        <ProbeFacts probe={probe} />
      </div>
      {unknown && (
        <div className="settings-form">
          <label className="settings-field">
            <span>{t("settings.contextWindow")}</span>
            <input inputMode="numeric" data-testid="setup-window" value={windowDraft} onChange={(e) => setWindowDraft(e.target.value.replace(/\D/g, ""))} />
            <span className="settings-hint">{t("settings.windowUnknown")}</span>
          </label>
        </div>
      )}
      <InlineError error={error} testId="setup-error" />
      <div className="dialog-actions">
        <button ref={doneButton} type="button" className="button button-primary" data-testid="setup-done" disabled={saving} onClick={() => void done()}>
          {t("setup.done")}
        </button>
      </div>
    </>
  );
}
