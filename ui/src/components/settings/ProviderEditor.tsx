import { useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/call";
import { commands, type AppError, type PricesView, type ProviderView } from "../../bindings";
import { formatNumber } from "../../lib/format";
import { windowSourceLabel } from "../../lib/labels";
import { InlineError } from "../InlineError";

type Props = {
  provider: ProviderView;
  onSaved: () => void;
  onCancel: () => void;
};

const PRICE_FIELDS = [
  ["input", "settings.priceInput"],
  ["cachedInput", "settings.priceCachedInput"],
  ["cacheWrite", "settings.priceCacheWrite"],
  ["output", "settings.priceOutput"],
] as const;

type PriceDraft = Record<keyof PricesView, string>;

function priceDraft(prices: PricesView | null): PriceDraft {
  const text = (v: number | null | undefined) => (v === undefined || v === null ? "" : String(v));
  return { input: text(prices?.input), cachedInput: text(prices?.cachedInput), cacheWrite: text(prices?.cacheWrite), output: text(prices?.output) };
}

/** All four prices, none (`null`), or `undefined` when only some are given. */
function pricesOf(draft: PriceDraft): PricesView | null | undefined {
  const values = Object.values(draft).map((v) => v.trim());
  if (values.every((v) => v === "")) return null;
  if (values.some((v) => v === "" || !Number.isFinite(Number(v)) || Number(v) < 0)) return undefined;
  return { input: Number(draft.input), cachedInput: Number(draft.cachedInput), cacheWrite: Number(draft.cacheWrite), output: Number(draft.output) };
}

/**
 * A provider's address, model and window, edited in place; a key typed here replaces the
 * stored one, a blank one keeps it. The runtime checks the address as it does when adding.
 * Its prices (for the cost runs show) and, on Anthropic, its prompt cache's lifetime are
 * edited here too; nothing is fetched to fill them.
 */
export function ProviderEditor({ provider, onSaved, onCancel }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [draft, setDraft] = useState({
    baseUrl: provider.baseUrl,
    model: provider.model,
    window: String(provider.contextWindow),
    apiKey: "",
  });
  const [prices, setPrices] = useState<PriceDraft>(() => priceDraft(provider.prices));
  const [cacheTtl, setCacheTtl] = useState(provider.cacheTtl);
  const [error, setError] = useState<AppError | null>(null);
  const [busy, setBusy] = useState(false);

  const save = async () => {
    const priced = pricesOf(prices);
    if (priced === undefined) {
      setError({ code: "invalid_input", message: t("settings.pricesIncomplete") });
      return;
    }
    setBusy(true);
    const res = await call(() =>
      commands.providerUpdate(provider.name, draft.baseUrl, draft.model, Number(draft.window) || 0, draft.apiKey || null),
    );
    const saved = res.status === "ok" ? await call(() => commands.providerPricingSave(provider.name, priced, cacheTtl)) : res;
    setBusy(false);
    setError(saved.status === "error" ? saved.error : null);
    if (saved.status === "ok") onSaved();
  };

  return (
    <form
      className="settings-form provider-editor"
      data-testid="provider-editor"
      aria-label={`${t("settings.edit")}: ${provider.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <label className="settings-field">
        <span>{t("settings.baseUrl")}</span>
        <input data-testid="edit-base-url" value={draft.baseUrl} onChange={(e) => setDraft({ ...draft, baseUrl: e.target.value })} />
      </label>
      <label className="settings-field">
        <span>{t("settings.model")}</span>
        <input data-testid="edit-model" value={draft.model} onChange={(e) => setDraft({ ...draft, model: e.target.value })} />
      </label>
      <label className="settings-field">
        <span>{t("settings.contextWindow")}</span>
        <input
          inputMode="numeric"
          data-testid="edit-window"
          value={draft.window}
          onChange={(e) => setDraft({ ...draft, window: e.target.value.replace(/\D/g, "") })}
        />
        {/* Where the window in force comes from; a window typed here becomes the configured one. */}
        <span className="settings-hint" data-testid="edit-window-source" data-source={provider.contextWindowSource}>
          {windowSourceLabel(t, provider.contextWindowSource, formatNumber(provider.contextWindow, lang))}
          {provider.contextWindowSource === "preset" && <> {t("settings.windowUnknown")}</>}
        </span>
      </label>
      <fieldset className="settings-field provider-prices" data-testid="edit-prices">
        <legend>{t("settings.prices")}</legend>
        {PRICE_FIELDS.map(([key, label]) => (
          <label key={key}>
            <span>{t(label)}</span>
            <input
              inputMode="decimal"
              data-testid={`edit-price-${key}`}
              value={prices[key]}
              onChange={(e) => setPrices({ ...prices, [key]: e.target.value.replace(/[^\d.]/g, "") })}
            />
          </label>
        ))}
      </fieldset>
      {provider.kind === "anthropic" && (
        <label className="settings-field">
          <span>{t("settings.cacheTtl")}</span>
          <select data-testid="edit-cache-ttl" value={cacheTtl} onChange={(e) => setCacheTtl(e.target.value)}>
            <option value="5m">{t("settings.cacheTtl5m")}</option>
            <option value="1h">{t("settings.cacheTtl1h")}</option>
          </select>
        </label>
      )}
      <label className="settings-field">
        <span>{t("settings.newKey")}</span>
        <input
          type="password"
          autoComplete="off"
          placeholder={provider.hasApiKey ? t("settings.keepKey") : ""}
          data-testid="edit-key"
          value={draft.apiKey}
          onChange={(e) => setDraft({ ...draft, apiKey: e.target.value })}
        />
      </label>
      <div className="settings-field provider-editor-actions">
        <button type="submit" className="button button-small button-primary" data-testid="edit-save" disabled={busy}>
          {t("settings.save")}
        </button>
        <button type="button" className="button button-small" onClick={onCancel}>
          {t("conversation.cancel")}
        </button>
      </div>
      <InlineError error={error} testId="edit-error" />
    </form>
  );
}
