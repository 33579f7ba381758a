import { useTranslation } from "react-i18next";
import type { AppError } from "../bindings";
import { CloseIcon } from "./Icons";

type Props = { error: AppError; onDismiss: () => void };

export function ErrorBanner({ error, onDismiss }: Props) {
  const { t } = useTranslation();
  return (
    <div className="error-banner" role="alert" data-testid="error-banner" data-error-code={error.code}>
      <span className="error-code">{t(`error.codes.${error.code}`, { defaultValue: error.code })}</span>
      <span className="error-message" data-testid="error-message">
        {error.message}
      </span>
      <button
        type="button"
        className="icon-button"
        data-testid="error-dismiss"
        aria-label={t("error.dismiss")}
        title={t("error.dismiss")}
        onClick={onDismiss}
      >
        <CloseIcon />
      </button>
    </div>
  );
}
