import { FilePicker } from "./FilePicker";
import { useEffect, useRef, useState, type DragEvent } from "react";
import { useModal } from "../hooks/useModal";
import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import {
  commands,
  type AppError,
  type PresetView,
  type ProbeFailure,
  type ProviderProbe,
  type ProviderView,
  type SandboxStatus,
} from "../bindings";
import { formatNumber } from "../lib/format";
import { windowSourceLabel } from "../lib/labels";
import { InlineError } from "./InlineError";
import { McpServers } from "./McpServers";
import { saveSendKey, savedSendKey, SEND_KEYS, type SendKey } from "../lib/sendKey";
import { applyTheme, savedTheme, THEMES, type Theme } from "../lib/theme";
import { LanguageSwitch } from "./LanguageSwitch";
import { ProbeFacts } from "./settings/ProbeFacts";
import { ProviderEditor } from "./settings/ProviderEditor";
import { RunSettings } from "./settings/RunSettings";
import { ThresholdsEditor } from "./settings/ThresholdsEditor";
import { SharedDatabase } from "./settings/SharedDatabase";
import { About } from "./settings/About";

type Props = { onClose: () => void };

/**
 * A provider test's state: going, passed (with what the test learned of the window and the
 * server), or failed with a plain sentence and its details.
 */
type Tested =
  | { state: "testing" }
  // What the test found, kept as data: the sentence is written when shown, in the language
  // the window speaks then (a result kept in words stayed in the language it was shown in).
  | { state: "passed"; probe: ProviderProbe }
  | { state: "failed"; probe: ProviderProbe & { failure: ProbeFailure } }
  | { state: "failed"; error: AppError };

/** One plain sentence for a failed provider test, in the window's language. */
export function probeSentence(failure: ProbeFailure, t: TFunction): string {
  const known = ["unreachable", "unauthorized", "not_found", "rate_limited", "http", "timeout"] as const;
  const kind = known.find((k) => k === failure.kind) ?? "other";
  return t(`settings.probe.${kind}`, { url: failure.url, status: failure.status ?? "" });
}

/** Pass or fail at a glance, the sentence beside it, the details folded. */
function TestResult({ result }: { result: Tested }) {
  const { t } = useTranslation();
  if (result.state === "testing") {
    return (
      <span className="provider-test-result" data-testid="provider-test-result" data-state="testing">
        {" "}
        {t("settings.testing")}
      </span>
    );
  }
  const sentence =
    "error" in result
      ? result.error.message
      : result.state === "failed"
        ? probeSentence(result.probe.failure, t)
        : t("settings.testOk", { ms: result.probe.elapsedMs });
  const detail = "probe" in result && result.state === "failed" ? result.probe.failure.detail : null;
  return (
    <div className={`provider-test-result test-${result.state}`} data-testid="provider-test-result" data-state={result.state} role="status">
      <span aria-hidden="true">{result.state === "passed" ? "✓" : "✗"}</span> {sentence}
      {result.state === "passed" && <ProbeFacts probe={result.probe} />}
      {detail && (
        <details className="provider-test-detail">
          <summary>{t("settings.probe.details")}</summary>
          <code>{detail}</code>
        </details>
      )}
    </div>
  );
}

/**
 * Providers (keys go to the keyring) with their thresholds, what runs use (provider, reviewer,
 * sandbox), the language, the theme, the presets.
 */
export function SettingsDialog({ onClose }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [providers, setProviders] = useState<ProviderView[]>([]);
  const [presets, setPresets] = useState<PresetView[]>([]);
  const [sandbox, setSandbox] = useState<SandboxStatus | null>(null);
  const [theme, setTheme] = useState<Theme>(savedTheme());
  const [sendKey, setSendKey] = useState<SendKey>(savedSendKey);
  const [tested, setTested] = useState<Record<string, Tested>>({});
  const [draft, setDraft] = useState({ name: "", preset: "", baseUrl: "", model: "", window: "", apiKey: "" });
  const [imported, setImported] = useState<string | null>(null);
  // Errors where they happened: reading the lists, adding, removing a provider, importing.
  const [loadError, setLoadError] = useState<AppError | null>(null);
  const [addError, setAddError] = useState<AppError | null>(null);
  const [removeErrors, setRemoveErrors] = useState<Record<string, AppError>>({});
  const [importError, setImportError] = useState<AppError | null>(null);
  const [editing, setEditing] = useState<string | null>(null);

  const load = async () => {
    const [p, s, l] = await Promise.all([
      call(() => commands.providerList()),
      call(() => commands.sandboxStatus()),
      call(() => commands.presetList()),
    ]);
    if (p.status === "ok") setProviders(p.data);
    if (s.status === "ok") setSandbox(s.data);
    if (l.status === "ok") setPresets(l.data);
    setLoadError(p.status === "error" ? p.error : l.status === "error" ? l.error : null);
  };
  useEffect(() => {
    void load();
    // Loaded once when the dialog opens.
  }, []);

  const add = async () => {
    const res = await call(() =>
      commands.providerAdd(
        draft.name,
        draft.preset || null,
        draft.preset ? null : "openai",
        draft.baseUrl || null,
        draft.model || null,
        draft.window ? Number(draft.window) : null,
        draft.apiKey || null,
      ),
    );
    setAddError(res.status === "error" ? res.error : null);
    if (res.status === "ok") {
      setDraft({ name: "", preset: "", baseUrl: "", model: "", window: "", apiKey: "" });
      await load();
    }
  };

  const test = async (name: string) => {
    setTested((all) => ({ ...all, [name]: { state: "testing" } }));
    const res = await call(() => commands.providerTest(name));
    setTested((all) => ({
      ...all,
      [name]:
        res.status === "error"
          ? { state: "failed", error: res.error }
          : res.data.failure
            ? { state: "failed", probe: { ...res.data, failure: res.data.failure } }
            : { state: "passed", probe: res.data },
    }));
    // The test read the served window again and may have stored it: the row says the new one.
    if (res.status === "ok" && !res.data.failure) {
      const listed = await call(() => commands.providerList());
      if (listed.status === "ok") setProviders(listed.data);
    }
  };

  const remove = async (name: string) => {
    const res = await call(() => commands.providerRemove(name));
    setRemoveErrors(({ [name]: _, ...rest }) => (res.status === "error" ? { ...rest, [name]: res.error } : rest));
    if (res.status === "ok") await load();
  };

  const importFile = async (file: File) => {
    const bytes = Array.from(new Uint8Array(await file.arrayBuffer()));
    const res = await call(() => commands.presetImport(file.name, bytes));
    setImportError(res.status === "error" ? res.error : null);
    if (res.status === "ok") {
      setImported(res.data.name);
      await load();
    }
  };

  const dialog = useRef<HTMLDivElement>(null);
  useModal(dialog, onClose);

  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault();
    const file = e.dataTransfer.files[0];
    if (file) void importFile(file);
  };

  return (
    <div className="overlay">
      <div ref={dialog} className="dialog settings-dialog" role="dialog" aria-modal="true" aria-label={t("settings.label")} data-testid="settings-dialog">
        <h2>{t("settings.label")}</h2>
        <InlineError error={loadError} testId="settings-load-error" />

        <section aria-label={t("settings.providers")}>
          <h3>{t("settings.providers")}</h3>
          <ul className="settings-list">
            {providers.map((p) => (
              <li key={p.name} data-testid="provider" data-name={p.name}>
                <strong>{p.name}</strong> {p.model} · {p.baseUrl} ·{" "}
                <span data-testid="provider-window-source" data-source={p.contextWindowSource}>
                  {t("settings.windowIs", {
                    window: windowSourceLabel(t, p.contextWindowSource, formatNumber(p.contextWindow, lang)),
                  })}
                </span>{" "}
                ·{" "}
                <span data-testid="provider-key-place">
                  {!p.hasApiKey
                    ? t("settings.noKey")
                    : p.keyFile
                      ? t("settings.keyInFile", { path: p.keyFile })
                      : t("settings.keyStored")}
                </span>
                <button type="button" className="button button-small" data-testid="provider-test" onClick={() => void test(p.name)}>
                  {t("settings.test")}
                </button>
                <button
                  type="button"
                  className="button button-small"
                  data-testid="provider-edit"
                  aria-expanded={editing === p.name}
                  onClick={() => setEditing(editing === p.name ? null : p.name)}
                >
                  {t("settings.edit")}
                </button>
                <button type="button" className="button button-small" data-testid="provider-remove" onClick={() => void remove(p.name)}>
                  {t("settings.remove")}
                </button>
                {editing === p.name && (
                  <ProviderEditor
                    provider={p}
                    onCancel={() => setEditing(null)}
                    onSaved={() => {
                      setEditing(null);
                      setTested(({ [p.name]: _, ...rest }) => rest);
                      void load();
                    }}
                  />
                )}
                {tested[p.name] && <TestResult result={tested[p.name]!} />}
                <InlineError error={removeErrors[p.name] ?? null} testId="provider-remove-error" />
                <ThresholdsEditor
                  key={JSON.stringify(p.thresholds)}
                  provider={p}
                  onSaved={(updated) => setProviders((all) => all.map((x) => (x.name === updated.name ? updated : x)))}
                />
              </li>
            ))}
          </ul>
          <form
            className="settings-form"
            onSubmit={(e) => {
              e.preventDefault();
              void add();
            }}
          >
            {/* Each field has a visible label: a placeholder alone disappears as one types. */}
            <label className="settings-field">
              <span>{t("settings.name")}</span>
              <input data-testid="provider-name" value={draft.name} onChange={(e) => setDraft({ ...draft, name: e.target.value })} />
            </label>
            <label className="settings-field">
              <span>{t("settings.preset")}</span>
              <input placeholder={t("settings.presetHint")} data-testid="provider-preset" value={draft.preset} onChange={(e) => setDraft({ ...draft, preset: e.target.value })} />
            </label>
            <label className="settings-field">
              <span>{t("settings.baseUrl")}</span>
              <input placeholder="https://…/v1" data-testid="provider-base-url" value={draft.baseUrl} onChange={(e) => setDraft({ ...draft, baseUrl: e.target.value })} />
            </label>
            <label className="settings-field">
              <span>{t("settings.model")}</span>
              <input data-testid="provider-model" value={draft.model} onChange={(e) => setDraft({ ...draft, model: e.target.value })} />
            </label>
            <label className="settings-field">
              <span>{t("settings.contextWindow")}</span>
              <input inputMode="numeric" data-testid="provider-window" value={draft.window} onChange={(e) => setDraft({ ...draft, window: e.target.value.replace(/\D/g, "") })} />
            </label>
            <label className="settings-field">
              <span>{t("settings.apiKey")}</span>
              <input type="password" autoComplete="off" data-testid="provider-key" value={draft.apiKey} onChange={(e) => setDraft({ ...draft, apiKey: e.target.value })} />
            </label>
            <button type="submit" className="button button-primary" data-testid="provider-add" disabled={draft.name.trim() === ""}>
              {t("settings.add")}
            </button>
          </form>
          <InlineError error={addError} testId="provider-add-error" />
        </section>

        <RunSettings
          providers={providers}
          sandbox={sandbox}
          onEngineChanged={() => {
            setSandbox(null);
            void call(() => commands.sandboxStatus()).then((s) => {
              if (s.status === "ok") setSandbox(s.data);
            });
          }}
        />

        <McpServers />

        <section aria-label={t("settings.appearance")}>
          <h3>{t("settings.appearance")}</h3>
          <LanguageSwitch />
          <div className="segmented" role="group" aria-label={t("settings.theme")} data-testid="theme-switch">
            {THEMES.map((th) => (
              <button
                key={th}
                type="button"
                data-theme-choice={th}
                aria-pressed={theme === th}
                className={theme === th ? "segmented-item active" : "segmented-item"}
                onClick={() => {
                  applyTheme(th);
                  setTheme(th);
                }}
              >
                {t(`settings.themes.${th}`)}
              </button>
            ))}
          </div>
          <div className="segmented" role="group" aria-label={t("settings.sendKey")} data-testid="send-key-switch">
            {SEND_KEYS.map((key) => (
              <button
                key={key}
                type="button"
                data-send-key={key}
                aria-pressed={sendKey === key}
                className={sendKey === key ? "segmented-item active" : "segmented-item"}
                onClick={() => {
                  saveSendKey(key);
                  setSendKey(key);
                }}
              >
                {t(`settings.sendKeys.${key}`)}
              </button>
            ))}
          </div>
        </section>

        <SharedDatabase />

        <section aria-label={t("settings.presets")}>
          <h3>{t("settings.presets")}</h3>
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

        <About />

        <div className="dialog-actions">
          <button type="button" className="button" data-testid="settings-close" onClick={onClose}>
            {t("review.close")}
          </button>
        </div>
      </div>
    </div>
  );
}
