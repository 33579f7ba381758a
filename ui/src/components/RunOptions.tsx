import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type ProviderName, type RunOptionsView } from "../bindings";
import { usePopover } from "../hooks/usePopover";
import { InlineError } from "./InlineError";

const SANDBOXES = ["host", "docker"] as const;
const MODES = ["hybrid", "tool_only", "system_only", "off"] as const;

type Props = {
  conversationId: string;
  /** Disabled while a run goes: it started with what was set. */
  disabled?: boolean;
};

/**
 * This conversation's run options, beside its composer: the provider, where tools run, how
 * many model calls a run may make, and where the tenth man runs. Each unset one follows the
 * settings (or the runtime's default), and says which. Saved on change; the next run uses them.
 */
export function RunOptions({ conversationId, disabled = false }: Props) {
  const { t } = useTranslation();
  const popover = usePopover();
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
  }, [conversationId, popover.open]);

  const save = async (next: Pick<RunOptionsView, "provider" | "sandbox" | "maxSteps" | "tenthMan">) => {
    const res = await call(() => commands.runOptionsSave(conversationId, next.provider, next.sandbox, next.maxSteps, next.tenthMan));
    setError(res.status === "error" ? res.error : null);
    if (res.status === "ok") {
      setOptions(res.data);
      setSteps(res.data.maxSteps === null ? "" : String(res.data.maxSteps));
    }
  };

  // The workspace: only the folder dialog names a folder, never the page.
  const chooseFolder = async () => {
    const res = await call(() => commands.workspaceChoose(conversationId, t("runOptions.chooseTitle")));
    setError(res.status === "error" ? res.error : null);
    if (res.status === "ok" && res.data) setOptions(res.data);
  };
  const useDefault = async () => {
    const res = await call(() => commands.workspaceUseDefault(conversationId));
    setError(res.status === "error" ? res.error : null);
    if (res.status === "ok") setOptions(res.data);
  };
  const openFolder = async () => {
    const res = await call(() => commands.workspaceOpen(conversationId));
    setError(res.status === "error" ? res.error : null);
  };

  if (!options) return error ? <InlineError error={error} testId="run-options-error" /> : null;
  const provider = options.provider ?? options.settingsProvider;
  const sandbox = options.sandbox ?? options.settingsSandbox;
  const maxSteps = options.maxSteps ?? options.defaultMaxSteps;
  const mode = options.tenthMan ?? options.defaultTenthMan;
  const summary = [
    provider ?? t("runOptions.onlyProvider"),
    t(`runOptions.sandboxes.${sandbox as "host"}`, { defaultValue: sandbox }),
    t("runOptions.stepsShort", { count: maxSteps }),
    t(`runOptions.modes.${mode as "hybrid"}`, { defaultValue: mode }),
  ].join(" · ");
  const own = (o: RunOptionsView) => ({ provider: o.provider, sandbox: o.sandbox, maxSteps: o.maxSteps, tenthMan: o.tenthMan });

  return (
    <div className="run-options" ref={popover.container}>
      <button
        ref={popover.trigger}
        type="button"
        className="link-button run-options-summary"
        data-testid="run-options-button"
        aria-expanded={popover.open}
        disabled={disabled}
        title={t("runOptions.label")}
        onClick={popover.toggle}
      >
        {summary}
      </button>
      {popover.open && (
        <div className="run-options-form" role="group" aria-label={t("runOptions.label")} data-testid="run-options">
          <label className="settings-field">
            <span>{t("runOptions.provider")}</span>
            <select
              data-testid="run-options-provider"
              value={options.provider ?? ""}
              onChange={(e) => void save({ ...own(options), provider: e.target.value || null })}
            >
              <option value="">{t("runOptions.fromSettings", { value: options.settingsProvider ?? t("runOptions.onlyProvider") })}</option>
              {providers.map((p) => (
                <option key={p.name} value={p.name}>
                  {p.name} ({p.model})
                </option>
              ))}
            </select>
          </label>
          <label className="settings-field">
            <span>{t("runOptions.sandbox")}</span>
            <select
              data-testid="run-options-sandbox"
              value={options.sandbox ?? ""}
              onChange={(e) => void save({ ...own(options), sandbox: e.target.value || null })}
            >
              <option value="">
                {t("runOptions.fromSettings", { value: t(`runOptions.sandboxes.${options.settingsSandbox as "host"}`, { defaultValue: options.settingsSandbox }) })}
              </option>
              {SANDBOXES.map((s) => (
                <option key={s} value={s}>
                  {t(`runOptions.sandboxes.${s}`)}
                </option>
              ))}
            </select>
          </label>
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
          <label className="settings-field">
            <span>{t("runOptions.tenthMan")}</span>
            <select
              data-testid="run-options-tenth-man"
              value={options.tenthMan ?? ""}
              onChange={(e) => void save({ ...own(options), tenthMan: e.target.value || null })}
            >
              <option value="">{t("runOptions.default", { value: t(`runOptions.modes.${options.defaultTenthMan as "hybrid"}`) })}</option>
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {t(`runOptions.modes.${m}`)}
                </option>
              ))}
            </select>
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
                    <button type="button" className="button button-small" data-testid="workspace-default" onClick={() => void useDefault()}>
                      {t("runOptions.useDefault")}
                    </button>
                  )}
                </span>
              </>
            )}
          </div>
          <InlineError error={error} testId="run-options-error" />
        </div>
      )}
    </div>
  );
}
