import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/call";
import { commands, type AppError, type ProviderProbe, type ProviderView } from "../../bindings";
import { InlineError } from "../InlineError";
import { ProbeFacts } from "../settings/ProbeFacts";

/** A provider that answered its test, with what the test learned. */
export type Passed = { probe: ProviderProbe; provider: ProviderView };

type Props = {
  passed: Passed;
  /** Whether the provider is now the one runs use (the first start makes it so). */
  inUse: boolean;
  onDone: () => void;
};

/**
 * The provider answered: what the test learned, the window to set where the server does not say
 * it, and Done. Shown by the add form wherever it is (first start, Settings), so both say the
 * same.
 */
export function ProviderPassed({ passed, inUse, onDone }: Props) {
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
        <span aria-hidden="true">✓</span> {t(inUse ? "setup.passed" : "setup.passedAdded", { ms: probe.elapsedMs })}
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
