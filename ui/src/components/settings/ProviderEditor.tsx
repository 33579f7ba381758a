import { useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/call";
import { commands, type AppError, type ProviderView } from "../../bindings";
import { InlineError } from "../InlineError";

type Props = {
  provider: ProviderView;
  onSaved: () => void;
  onCancel: () => void;
};

/**
 * A provider's address, model and window, edited in place; a key typed here replaces the
 * stored one, a blank one keeps it. The runtime checks the address as it does when adding.
 */
export function ProviderEditor({ provider, onSaved, onCancel }: Props) {
  const { t } = useTranslation();
  const [draft, setDraft] = useState({
    baseUrl: provider.baseUrl,
    model: provider.model,
    window: String(provider.contextWindow),
    apiKey: "",
  });
  const [error, setError] = useState<AppError | null>(null);
  const [busy, setBusy] = useState(false);

  const save = async () => {
    setBusy(true);
    const res = await call(() =>
      commands.providerUpdate(provider.name, draft.baseUrl, draft.model, Number(draft.window) || 0, draft.apiKey || null),
    );
    setBusy(false);
    setError(res.status === "error" ? res.error : null);
    if (res.status === "ok") onSaved();
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
      </label>
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
