import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import type { AppError } from "../bindings";
import { InlineError } from "./InlineError";

/** The title field's id, which the new-conversation shortcut focuses. */
export const NEW_CONVERSATION_INPUT = "new-conversation-title";

type Props = {
  /** Resolves to null when the conversation was created (then the field is cleared), else to
   *  the error, shown under the form. */
  onCreate: (title: string) => Promise<AppError | null>;
};

export function NewConversationForm({ onCreate }: Props) {
  const { t } = useTranslation();
  const [title, setTitle] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<AppError | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (busy) return;
    const trimmed = title.trim();
    setBusy(true);
    const failed = await onCreate(trimmed === "" ? t("newConversation.defaultTitle") : trimmed);
    setBusy(false);
    setError(failed);
    // On failure the typed title stays so the user can retry.
    if (failed === null) setTitle("");
  }

  return (
    <form className="new-conversation" onSubmit={(e) => void submit(e)} aria-busy={busy}>
      <input
        type="text"
        className="text-input"
        id={NEW_CONVERSATION_INPUT}
        data-testid="new-conversation-title"
        aria-label={t("newConversation.label")}
        placeholder={t("newConversation.placeholder")}
        value={title}
        readOnly={busy}
        onChange={(e) => {
          setTitle(e.target.value);
          setError(null);
        }}
      />
      <button type="submit" className="button button-primary" data-testid="new-conversation-submit" disabled={busy}>
        {busy ? t("newConversation.creating") : t("newConversation.submit")}
      </button>
      <div className="new-conversation-error">
        <InlineError error={error} testId="new-conversation-error" />
      </div>
    </form>
  );
}
