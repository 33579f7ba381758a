import { useTranslation } from "react-i18next";
import type { ExecutionView } from "../bindings";

type Props = {
  executions: ExecutionView[];
  onResume: (execution: ExecutionView) => void;
  onDismiss: (id: string) => void;
};

/** Runs a crash left interrupted, offered for resume when the window starts. */
export function InterruptedNotice({ executions, onResume, onDismiss }: Props) {
  const { t } = useTranslation();
  if (executions.length === 0) return null;
  return (
    <div className="interrupted" role="region" aria-label={t("interrupted.label")}>
      {executions.map((e) => (
        <div key={e.id} className="interrupted-item" data-testid="interrupted-notice" data-execution-id={e.id}>
          <span>{t("interrupted.text", { task: e.task })}</span>
          <button type="button" className="button button-primary" data-testid="resume" onClick={() => onResume(e)}>
            {t("interrupted.resume")}
          </button>
          <button type="button" className="button" onClick={() => onDismiss(e.id)}>
            {t("interrupted.dismiss")}
          </button>
        </div>
      ))}
    </div>
  );
}
