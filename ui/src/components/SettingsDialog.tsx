import { useEffect, useRef, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type ProviderView } from "../bindings";
import { useModal } from "../hooks/useModal";
import { InlineError } from "./InlineError";
import { McpServers } from "./McpServers";
import { About } from "./settings/About";
import { Appearance } from "./settings/Appearance";
import { Presets } from "./settings/Presets";
import { Providers } from "./settings/Providers";
import { RunSettings } from "./settings/RunSettings";
import { SandboxSettings } from "./settings/SandboxSettings";
import { SectionTabs } from "./settings/SectionTabs";
import { SharedDatabase } from "./settings/SharedDatabase";
import { useWorkbenchSettings } from "./settings/useWorkbenchSettings";

type Props = { onClose: () => void };

/** The settings' sections, in the order of their tabs; the first is the one Settings opens on. */
export const SETTINGS_SECTIONS = ["models", "runs", "sandbox", "mcp", "store", "appearance"] as const;
/** One section of the settings (its tab is `settings-tab-<id>`, its panel `settings-panel-<id>`). */
export type SettingsSection = (typeof SETTINGS_SECTIONS)[number];

/**
 * The settings in sections, so a setting is found by where it belongs rather than down one long
 * form: the models (providers, their thresholds, the add form the first start uses), what runs
 * use (providers, presets), the sandbox, the MCP servers, the team's shared store, and the
 * window's language, theme and send key. The build it is (About) stays in sight below them.
 */
export function SettingsDialog({ onClose }: Props) {
  const { t } = useTranslation();
  const [providers, setProviders] = useState<ProviderView[]>([]);
  const [loadError, setLoadError] = useState<AppError | null>(null);
  const workbench = useWorkbenchSettings();

  // The providers are Models' list and Runs' choices: read here, for both.
  const load = async () => {
    const res = await call(() => commands.providerList());
    if (res.status === "ok") setProviders(res.data);
    setLoadError(res.status === "error" ? res.error : null);
  };
  useEffect(() => {
    void load();
    // Loaded once when the dialog opens.
  }, []);

  const dialog = useRef<HTMLDivElement>(null);
  useModal(dialog, onClose);

  const content: Record<SettingsSection, ReactNode> = {
    models: (
      <Providers
        providers={providers}
        onChanged={() => void load()}
        onUpdated={(updated) => setProviders((all) => all.map((x) => (x.name === updated.name ? updated : x)))}
      />
    ),
    runs: (
      <>
        <RunSettings providers={providers} workbench={workbench} />
        <Presets />
      </>
    ),
    sandbox: <SandboxSettings workbench={workbench} />,
    mcp: <McpServers />,
    store: <SharedDatabase />,
    appearance: <Appearance />,
  };

  return (
    <div className="overlay">
      <div ref={dialog} className="dialog settings-dialog" role="dialog" aria-modal="true" aria-label={t("settings.label")} data-testid="settings-dialog">
        <h2>{t("settings.label")}</h2>
        <InlineError error={loadError} testId="settings-load-error" />
        <SectionTabs
          label={t("settings.sections.label")}
          testIdPrefix="settings"
          sections={SETTINGS_SECTIONS.map((id) => ({ id, label: t(`settings.sections.${id}`), content: content[id] }))}
        />
        <div className="settings-footer">
          <About />
          <button type="button" className="button" data-testid="settings-close" onClick={onClose}>
            {t("review.close")}
          </button>
        </div>
      </div>
    </div>
  );
}
