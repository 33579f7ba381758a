import { useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/call";
import { commands, type AppError, type ProviderView, type ThresholdsView } from "../../bindings";
import { InlineError } from "../InlineError";

type Props = { provider: ProviderView; onSaved: (updated: ProviderView) => void };

const FIELDS = [
  ["warn", "settings.warnAt"],
  ["compress", "settings.compressAt"],
  ["deep", "settings.deepAt"],
] as const;

/** Shown in percent, kept as fractions: 0.7 ⇄ "70". A value JSON could not carry shows empty. */
const percent = (fraction: number | null) => (fraction === null ? "" : String(Math.round(fraction * 1000) / 10));

/**
 * A provider's thresholds, in percent of its window, and whether it compresses on its own. The
 * runtime refuses thresholds that do not increase, and the error says so.
 */
export function ThresholdsEditor({ provider, onSaved }: Props) {
  const { t } = useTranslation();
  const initial = provider.thresholds;
  const [error, setError] = useState<AppError | null>(null);
  const [draft, setDraft] = useState({
    warn: percent(initial.warn),
    compress: percent(initial.compress),
    deep: percent(initial.deep),
    enabled: initial.enabled,
  });

  const save = async () => {
    const thresholds: ThresholdsView = {
      warn: Number(draft.warn) / 100,
      compress: Number(draft.compress) / 100,
      deep: Number(draft.deep) / 100,
      enabled: draft.enabled,
    };
    const res = await call(() => commands.providerThresholdsSave(provider.name, thresholds));
    // Refused thresholds are said under them; saved ones clear it.
    setError(res.status === "error" ? res.error : null);
    if (res.status === "ok") onSaved(res.data);
  };

  return (
    <form
      className="thresholds-form"
      aria-label={`${t("settings.thresholds")}: ${provider.name}`}
      data-testid="thresholds"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      {FIELDS.map(([field, label]) => (
        <label key={field} className="settings-field">
          <span>{t(label)}</span>
          <input
            inputMode="decimal"
            size={4}
            data-testid={`threshold-${field}`}
            value={draft[field]}
            onChange={(e) => setDraft({ ...draft, [field]: e.target.value.replace(/[^\d.]/g, "") })}
          />
        </label>
      ))}
      <label className="settings-field">
        <input
          type="checkbox"
          data-testid="threshold-enabled"
          checked={draft.enabled}
          onChange={(e) => setDraft({ ...draft, enabled: e.target.checked })}
        />
        <span>{t("settings.autoCompress")}</span>
      </label>
      <button type="submit" className="button button-small" data-testid="thresholds-save">
        {t("settings.saveThresholds")}
      </button>
      <InlineError error={error} testId="thresholds-error" />
    </form>
  );
}
