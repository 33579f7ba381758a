import { useTranslation } from "react-i18next";
import type { AppError } from "../bindings";

/**
 * An error where the action was taken: under the field, in the dialog or on the row, rather
 * than in a banner behind whatever is open. It names the kind of problem in the window's words,
 * then what the backend said.
 */
export function InlineError({ error, testId = "inline-error" }: { error: AppError | null; testId?: string }) {
  const { t } = useTranslation();
  if (!error) return null;
  return (
    <p className="inline-error" role="alert" data-testid={testId} data-error-code={error.code}>
      <span className="inline-error-kind">{t(`error.codes.${error.code}`, { defaultValue: error.code })}</span>{" "}
      {error.message}
    </p>
  );
}
