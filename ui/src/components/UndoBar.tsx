import { useTranslation } from "react-i18next";
import type { AppError } from "../bindings";
import { CloseIcon } from "./Icons";
import { InlineError } from "./InlineError";

type Props = { title: string; onUndo: () => void; onDismiss: () => void; error?: AppError | null };

export function UndoBar({ title, onUndo, onDismiss, error = null }: Props) {
  const { t } = useTranslation();
  return (
    <div className="undo-bar" role="status" data-testid="undo-delete">
      {error && (
        <div className="undo-error">
          <InlineError error={error} testId="undo-error" />
        </div>
      )}
      <span className="undo-text" title={title}>
        {t("undo.deleted", { title })}
      </span>
      <span aria-hidden="true">·</span>
      <button type="button" className="link-button" data-testid="undo-delete-button" onClick={onUndo}>
        {t("undo.undo")}
      </button>
      <button
        type="button"
        className="icon-button"
        data-testid="undo-dismiss"
        aria-label={t("undo.dismiss")}
        title={t("undo.dismiss")}
        onClick={onDismiss}
      >
        <CloseIcon />
      </button>
    </div>
  );
}
