import { useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { AppError } from "../bindings";
import { useModal } from "../hooks/useModal";
import { InlineError } from "./InlineError";

type Props = {
  /** Edit the last message sent, or regenerate the answer to it as it is. */
  mode: "edit" | "regenerate";
  /** The last message sent. */
  text: string;
  /** How many messages leave the conversation (that one and what followed). */
  setAside: number;
  /** Starts the run; resolves to the error that refused it. */
  onRun: (text: string) => Promise<AppError | null>;
  onClose: () => void;
};

/**
 * Runs the last task again, edited or as it was. It says first what leaves the conversation:
 * the last message sent and everything after it, which stay in the database as deleted rows,
 * the record of what was there.
 */
export function RerunDialog({ mode, text, setAside, onRun, onClose }: Props) {
  const { t } = useTranslation();
  const [draft, setDraft] = useState(text);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<AppError | null>(null);
  const dialog = useRef<HTMLDivElement>(null);
  useModal(dialog, onClose);
  const title = mode === "edit" ? t("message.rerun.editTitle") : t("message.rerun.regenerateTitle");

  const run = async () => {
    setBusy(true);
    const failed = await onRun(draft.trim());
    setBusy(false);
    if (failed) setError(failed);
    else onClose();
  };

  return (
    <div className="overlay">
      <div ref={dialog} className="dialog rerun-dialog" role="dialog" aria-modal="true" aria-label={title} data-testid="rerun-dialog">
        <h2>{title}</h2>
        {mode === "edit" ? (
          <label className="rerun-field">
            <span>{t("message.rerun.task")}</span>
            <textarea
              className="composer-input"
              rows={5}
              value={draft}
              onChange={(e) => setDraft(e.target.value)}
              data-testid="rerun-text"
            />
          </label>
        ) : (
          <blockquote className="rerun-quote">{text}</blockquote>
        )}
        <p className="muted" data-testid="rerun-set-aside">
          {t("message.rerun.setAside", { count: setAside })}
        </p>
        <InlineError error={error} testId="rerun-error" />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            {t("message.rerun.cancel")}
          </button>
          <button
            type="button"
            className="button button-primary"
            data-testid="rerun-confirm"
            disabled={busy || draft.trim() === ""}
            onClick={() => void run()}
          >
            {t("message.rerun.run")}
          </button>
        </div>
      </div>
    </div>
  );
}
