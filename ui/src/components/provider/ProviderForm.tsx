import { useEffect, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/call";
import { commands, type AppError, type ProbeFailure, type ProviderPresetView } from "../../bindings";
import { InlineError } from "../InlineError";
import { probeHasFacts } from "../settings/ProbeFacts";
import { ProviderPassed, type Passed } from "./ProviderPassed";
import { probeSentence } from "./probeSentence";

type Kind = "openai" | "anthropic";
const KINDS: Kind[] = ["openai", "anthropic"];

type Props = {
  /** Whether a provider that passes its test becomes the one runs use (the first start). */
  makeDefault: boolean;
  /** A provider was stored or replaced: one added stays even when its test then fails. */
  onListChanged?: () => void;
  /** The test passed (and, with `makeDefault`, runs use the provider now). */
  onPassed?: () => void;
  /** The analyst is done with a provider that passed: what its test learned. */
  onDone: (passed: Passed) => void;
  /** A button beside "Add and test" (the first start's "Later"). */
  secondary?: ReactNode;
};

/**
 * The one form that adds a provider, at the first start and in Settings alike, so its fields,
 * checks, test and errors are the same in both: the kind of server, a preset, the name, the
 * address and key, then the model from the server's own list where it gives one. "Add and test"
 * stores the provider (its key in the keyring) and sends it a tiny request; what the test
 * learned is shown before Done, with the window to set where the server does not say it.
 */
export function ProviderForm({ makeDefault, onListChanged, onPassed, onDone, secondary }: Props) {
  const [passed, setPassed] = useState<Passed | null>(null);
  if (passed) return <ProviderPassed passed={passed} inUse={makeDefault} onDone={() => onDone(passed)} />;
  return (
    <ProviderFields
      makeDefault={makeDefault}
      onListChanged={onListChanged}
      secondary={secondary}
      onPassed={(p) => {
        onPassed?.();
        // Nothing learned beyond the time: nothing to show before Done.
        if (probeHasFacts(p.probe)) setPassed(p);
        else onDone(p);
      }}
    />
  );
}

/** The form's fields and its Add button, until a provider passes its test. */
function ProviderFields({
  makeDefault,
  onListChanged,
  onPassed,
  secondary,
}: Omit<Props, "onDone" | "onPassed"> & { onPassed: (passed: Passed) => void }) {
  const { t } = useTranslation();
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
  // The provider an earlier try added (and whose test then failed): the next try replaces it.
  const [added, setAdded] = useState<string | null>(null);

  useEffect(() => {
    let alive = true;
    void call(() => commands.providerPresets()).then((res) => {
      if (alive && res.status === "ok") setPresets(res.data);
    });
    return () => {
      alive = false;
    };
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
    if (added !== null) {
      await call(() => commands.providerRemove(added));
      setAdded(null);
    }
    const res = await call(() =>
      commands.providerAdd(name.trim(), preset || null, preset ? null : kind, baseUrl || null, model || null, null, apiKey || null),
    );
    if (res.status === "error") {
      setBusy(null);
      setError(res.error);
      if (added !== null) onListChanged?.();
      return;
    }
    setAdded(res.data.name);
    onListChanged?.();
    const probe = await call(() => commands.providerTest(res.data.name));
    if (probe.status === "error" || probe.data.failure) {
      setBusy(null);
      setFailed(probe.status === "error" ? probe.error : probe.data.failure);
      return;
    }
    if (makeDefault) {
      const current = await call(() => commands.settingsGet());
      const sandbox = current.status === "ok" ? current.data.sandbox : "host";
      const reviewer = current.status === "ok" ? current.data.reviewerProvider : null;
      const saved = await call(() => commands.settingsSave(res.data.name, reviewer, sandbox));
      if (saved.status === "error") {
        setBusy(null);
        setError(saved.error);
        return;
      }
    }
    setBusy(null);
    onPassed({ probe: probe.data, provider: res.data });
  };

  // Ollama speaks its own API but is one of the OpenAI-compatible kind's servers here.
  const shown = presets.filter((p) => (kind === "anthropic" ? p.kind === "anthropic" : p.kind !== "anthropic"));
  const incomplete = name.trim() === "" || (preset === "" && (baseUrl.trim() === "" || model.trim() === ""));
  return (
    <form
      className="provider-form"
      aria-label={t("settings.addProvider")}
      data-testid="provider-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (busy === null && !incomplete) void addAndTest();
      }}
    >
      <KindChoice
        kind={kind}
        onChange={(k) => {
          setKind(k);
          setPreset("");
          setModels(null);
        }}
      />
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
        <ModelField model={model} models={models} onChange={setModel} />
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
        {secondary}
        <button type="submit" className="button button-primary" data-testid="setup-add" disabled={busy !== null || incomplete}>
          {busy === "adding" ? t("setup.testing") : t(makeDefault ? "setup.add" : "setup.addAndTest")}
        </button>
      </div>
    </form>
  );
}

/** OpenAI-compatible or Anthropic: which presets are offered and how the server is spoken to. */
function KindChoice({ kind, onChange }: { kind: Kind; onChange: (kind: Kind) => void }) {
  const { t } = useTranslation();
  return (
    <div className="segmented" role="radiogroup" aria-label={t("setup.kind")}>
      {KINDS.map((k) => (
        <button
          key={k}
          type="button"
          role="radio"
          aria-checked={kind === k}
          className={kind === k ? "segmented-item active" : "segmented-item"}
          data-testid={`setup-kind-${k}`}
          onClick={() => onChange(k)}
        >
          {t(`setup.kinds.${k}`)}
        </button>
      ))}
    </div>
  );
}

/** The model: a choice among those the server listed, or typed where it listed none. */
function ModelField({ model, models, onChange }: { model: string; models: string[] | null; onChange: (model: string) => void }) {
  const { t } = useTranslation();
  return (
    <label className="settings-field">
      <span>{t("settings.model")}</span>
      {models && models.length > 0 ? (
        <select data-testid="setup-model" value={model} onChange={(e) => onChange(e.target.value)}>
          {models.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
      ) : (
        <input data-testid="setup-model" value={model} onChange={(e) => onChange(e.target.value)} />
      )}
    </label>
  );
}
