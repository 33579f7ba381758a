import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type ProviderName, type RunOptionsView } from "../bindings";
import { usePopover } from "../hooks/usePopover";
import { FolderNotOpened } from "./FolderNotOpened";
import { InlineError } from "./InlineError";
import { McpSwitches } from "./McpSwitches";
import { SandboxSwitchPrompt, transferText, type PendingSwitch, type SandboxName } from "./SandboxSwitch";

const SANDBOXES = ["host", "docker"] as const;
const MODES = ["hybrid", "tool_only", "system_only", "off"] as const;

type Props = {
  conversationId: string;
  /** Disabled while a run goes: it started with what was set. */
  disabled?: boolean;
  /** Changes when the settings were saved: what an unset option follows is read again. */
  settingsKey?: number;
  /** Where runs work changed (and files may have been copied there): the workspace is read again. */
  onSwitched?: () => void;
};

/**
 * This conversation's run options, beside its composer: the provider, where tools run, how
 * many model calls a run may make, and where the tenth man runs. Each unset one follows the
 * settings (or the runtime's default), and says which. Saved on change; the next run uses them.
 */
export function RunOptions({ conversationId, disabled = false, settingsKey = 0, onSwitched }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [pending, setPending] = useState<PendingSwitch | null>(null);
  const [moved, setMoved] = useState<string | null>(null);
  const { open, toggle, container, trigger } = usePopover();
  const [options, setOptions] = useState<RunOptionsView | null>(null);
  const [providers, setProviders] = useState<ProviderName[]>([]);
  const [error, setError] = useState<AppError | null>(null);
  const [steps, setSteps] = useState("");

  useEffect(() => {
    let alive = true;
    void (async () => {
      const [o, p] = await Promise.all([call(() => commands.runOptionsGet(conversationId)), call(() => commands.providerNames())]);
      if (!alive) return;
      if (o.status === "ok") {
        setOptions(o.data);
        setSteps(o.data.maxSteps === null ? "" : String(o.data.maxSteps));
      } else setError(o.error);
      if (p.status === "ok") setProviders(p.data);
    })();
    return () => {
      alive = false;
    };
  }, [conversationId, open, settingsKey]);

  const save = async (next: Pick<RunOptionsView, "provider" | "sandbox" | "maxSteps" | "tenthMan">): Promise<boolean> => {
    const res = await call(() => commands.runOptionsSave(conversationId, next.provider, next.sandbox, next.maxSteps, next.tenthMan));
    setError(res.status === "error" ? res.error : null);
    if (res.status === "ok") {
      setOptions(res.data);
      setSteps(res.data.maxSteps === null ? "" : String(res.data.maxSteps));
    }
    return res.status === "ok";
  };

  // A switch that leaves files behind asks first (see SandboxSwitchPrompt).
  const changeSandbox = async (current: RunOptionsView, value: string) => {
    setMoved(null);
    const from = (current.sandbox ?? current.settingsSandbox) as SandboxName;
    const to = (value || current.settingsSandbox) as SandboxName;
    const next = { provider: current.provider, sandbox: value || null, maxSteps: current.maxSteps, tenthMan: current.tenthMan };
    if (from === to) {
      await save(next);
      return;
    }
    const census = await call(() => commands.workspaceCensus(conversationId, from));
    if (census.status === "ok" && (census.data.files ?? 0) > 0) {
      setPending({ value, from, to, files: census.data.files ?? 0, bytes: census.data.bytes ?? 0 });
      return;
    }
    if (await save(next)) onSwitched?.();
    // A place that cannot be read (a stopped engine) is said; the switch still goes.
    if (census.status === "error") setError(census.error);
  };
  const setProviderDefault = async (provider: string, mode: string | null) => {
    const res = await call(() => commands.providerTenthManSave(provider, mode));
    if (res.status === "error") return setError(res.error);
    const again = await call(() => commands.runOptionsGet(conversationId));
    if (again.status === "ok") setOptions(again.data);
  };

  // The workspace: only the folder dialog names a folder, never the page.
  const chooseFolder = async () => {
    const res = await call(() => commands.workspaceChoose(conversationId, t("runOptions.chooseTitle")));
    setError(res.status === "error" ? res.error : null);
    if (res.status === "ok" && res.data) setOptions(res.data);
  };
  const backToDefault = async () => {
    const res = await call(() => commands.workspaceUseDefault(conversationId));
    setError(res.status === "error" ? res.error : null);
    if (res.status === "ok") setOptions(res.data);
  };
  const [unopened, setUnopened] = useState<string | null>(null);
  const openFolder = async () => {
    const res = await call(() => commands.workspaceOpen(conversationId));
    setError(res.status === "error" ? res.error : null);
    setUnopened(res.status === "ok" ? res.data : null);
  };

  if (!options) return error ? <InlineError error={error} testId="run-options-error" /> : null;
  // With no default, a run takes the only provider set up, and refuses when there are several.
  const only = providers.length === 1 ? providers[0] : undefined;
  const unset = only ? only.name : providers.length === 0 ? t("runOptions.noProvider") : t("runOptions.noDefault");
  const provider = options.provider ?? options.settingsProvider;
  const sandbox = options.sandbox ?? options.settingsSandbox;
  const maxSteps = options.maxSteps ?? options.defaultMaxSteps;
  const mode = options.tenthMan ?? options.defaultTenthMan;
  const summary = [
    provider ?? unset,
    t(`runOptions.sandboxes.${sandbox as "host"}`, { defaultValue: sandbox }),
    t("runOptions.stepsShort", { count: maxSteps }),
    t(`runOptions.modes.${mode as "hybrid"}`, { defaultValue: mode }),
  ].join(" · ");
  const own = (o: RunOptionsView) => ({ provider: o.provider, sandbox: o.sandbox, maxSteps: o.maxSteps, tenthMan: o.tenthMan });

  return (
    <div className="run-options" ref={container}>
      <button
        ref={trigger}
        type="button"
        className="link-button run-options-summary"
        data-testid="run-options-button"
        aria-expanded={open}
        disabled={disabled}
        title={t("runOptions.label")}
        onClick={toggle}
      >
        {summary}
      </button>
      {open && (
        <div className="run-options-form" role="group" aria-label={t("runOptions.label")} data-testid="run-options">
          <label className="settings-field run-options-wide">
            <span>{t("runOptions.provider")}</span>
            <ChoiceSelect
              testId="run-options-provider"
              value={options.provider ?? ""}
              choices={[
                { value: "", label: t("runOptions.fromSettings", { value: options.settingsProvider ?? unset }) },
                ...providers.map((p) => ({ value: p.name, label: `${p.name} (${p.model})` })),
              ]}
              onChange={(v) => void save({ ...own(options), provider: v || null })}
            />
          </label>
          <label className="settings-field">
            <span>{t("runOptions.sandbox")}</span>
            <ChoiceSelect
              testId="run-options-sandbox"
              value={options.sandbox ?? ""}
              choices={[
                {
                  value: "",
                  label: t("runOptions.fromSettings", {
                    value: t(`runOptions.sandboxes.${options.settingsSandbox as "host"}`, { defaultValue: options.settingsSandbox }),
                  }),
                },
                ...SANDBOXES.map((s) => ({ value: s, label: t(`runOptions.sandboxes.${s}`) })),
              ]}
              onChange={(v) => void changeSandbox(options, v)}
            />
          </label>
          {pending && (
            <SandboxSwitchPrompt
              conversationId={conversationId}
              pending={pending}
              onSave={(value) => save({ ...own(options), sandbox: value || null })}
              onDone={(switched, copied) => {
                const to = pending.to;
                setPending(null);
                if (copied) setMoved(transferText(t, copied, to, lang));
                if (switched) onSwitched?.();
              }}
            />
          )}
          {moved && (
            <p className="run-options-wide sandbox-switch-done" role="status" data-testid="sandbox-switch-done">
              {moved}
            </p>
          )}
          <label className="settings-field">
            <span>{t("runOptions.maxSteps")}</span>
            <input
              inputMode="numeric"
              data-testid="run-options-steps"
              placeholder={t("runOptions.default", { value: options.defaultMaxSteps })}
              value={steps}
              onChange={(e) => setSteps(e.target.value.replace(/\D/g, ""))}
              onBlur={() => void save({ ...own(options), maxSteps: steps === "" ? null : Number(steps) })}
              onKeyDown={(e) => {
                if (e.key === "Enter") void save({ ...own(options), maxSteps: steps === "" ? null : Number(steps) });
              }}
            />
          </label>
          <label className="settings-field run-options-wide">
            <span>{t("runOptions.tenthMan")}</span>
            <ChoiceSelect
              testId="run-options-tenth-man"
              value={options.tenthMan ?? ""}
              choices={[
                { value: "", label: t("runOptions.default", { value: t(`runOptions.modes.${options.defaultTenthMan as "hybrid"}`) }) },
                ...MODES.map((m) => ({ value: m, label: t(`runOptions.modes.${m}`) })),
              ]}
              onChange={(v) => void save({ ...own(options), tenthMan: v || null })}
            />
            {options.providerInForce !== null && (
              <ProviderDefault
                provider={options.providerInForce}
                chosen={options.tenthMan}
                providerMode={options.providerTenthMan}
                onSet={(mode) => void setProviderDefault(options.providerInForce!, mode)}
              />
            )}
          </label>
          <div className="settings-field run-options-workspace" data-testid="run-options-workspace">
            <span>{t("runOptions.workspace")}</span>
            {sandbox === "docker" ? (
              <p className="muted">{t("runOptions.workspaceDocker")}</p>
            ) : (
              <>
                <code className="workspace-path" data-testid="workspace-path" title={options.workspace ?? options.defaultWorkspace}>
                  {options.workspace ?? options.defaultWorkspace}
                </code>
                <span className="workspace-actions">
                  <button type="button" className="button button-small" data-testid="workspace-choose" onClick={() => void chooseFolder()}>
                    {t("runOptions.chooseFolder")}
                  </button>
                  <button type="button" className="button button-small" data-testid="workspace-open" onClick={() => void openFolder()}>
                    {t("runOptions.openFolder")}
                  </button>
                  {options.workspace !== null && (
                    <button type="button" className="button button-small" data-testid="workspace-default" onClick={() => void backToDefault()}>
                      {t("runOptions.useDefault")}
                    </button>
                  )}
                </span>
                {unopened && <FolderNotOpened path={unopened} testId="run-options-folder-path" />}
              </>
            )}
          </div>
          <McpSwitches conversationId={conversationId} disabled={disabled} />
          <InlineError error={error} testId="run-options-error" />
        </div>
      )}
    </div>
  );
}

type Choice = { value: string; label: string };

/**
 * A select whose chosen label is also its tooltip: in a narrow window a long label (a provider
 * with its model) is cut at the select's edge, and the tooltip still says it whole.
 */
function ChoiceSelect({ testId, value, choices, onChange }: { testId: string; value: string; choices: Choice[]; onChange: (value: string) => void }) {
  const chosen = choices.find((c) => c.value === value)?.label;
  return (
    <select data-testid={testId} value={value} title={chosen} onChange={(e) => onChange(e.target.value)}>
      {choices.map((c) => (
        <option key={c.value} value={c.value}>
          {c.label}
        </option>
      ))}
    </select>
  );
}

/**
 * A provider's own tenth man default, beside the conversation's choice: a small local model can
 * have it off for every conversation that does not choose, so a question stays a question.
 */
function ProviderDefault({ provider, chosen, providerMode, onSet }: { provider: string; chosen: string | null; providerMode: string | null; onSet: (mode: string | null) => void }) {
  const { t } = useTranslation();
  if (chosen !== null && chosen !== providerMode) {
    return (
      <button type="button" className="link-button run-options-provider-default" data-testid="tenth-man-provider-default" onClick={() => onSet(chosen)}>
        {t("runOptions.makeProviderDefault", { provider })}
      </button>
    );
  }
  if (providerMode !== null) {
    return (
      <span className="muted run-options-provider-default" data-testid="tenth-man-provider-default-set">
        {t("runOptions.providerDefault", { provider, mode: t(`runOptions.modes.${providerMode as "hybrid"}`) })}{" "}
        <button type="button" className="link-button" data-testid="tenth-man-provider-default-clear" onClick={() => onSet(null)}>
          {t("runOptions.clearProviderDefault")}
        </button>
      </span>
    );
  }
  return null;
}
