import { useTranslation } from "react-i18next";
import type { ProviderView } from "../../bindings";
import { InlineError } from "../InlineError";
import { useSectionSave, type WorkbenchSettingsState } from "./useWorkbenchSettings";

type Props = {
  providers: ProviderView[];
  workbench: WorkbenchSettingsState;
};

/**
 * What new runs use: the provider and the tenth man's provider. Each change is saved at once
 * (the runtime checks the names); a run already going keeps its own.
 */
export function RunSettings({ providers, workbench }: Props) {
  const { t } = useTranslation();
  const { settings, loadError } = workbench;
  const { saved, error, saveNow } = useSectionSave(workbench.save);

  if (settings === null) {
    return loadError ? (
      <section aria-label={t("settings.runs")} data-testid="run-settings">
        <h3>{t("settings.runs")}</h3>
        <InlineError error={loadError} testId="run-settings-error" />
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
        onChange={(provider) => void saveNow({ ...settings, provider })}
      />
      <ProviderSelect
        testId="reviewer-provider"
        label={t("settings.reviewerProvider")}
        none={t("settings.sameAsRun")}
        value={settings.reviewerProvider}
        choices={withSaved(settings.reviewerProvider)}
        onChange={(reviewerProvider) => void saveNow({ ...settings, reviewerProvider })}
      />
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
