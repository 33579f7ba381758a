import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { FailureReport } from "../bindings";
import type { Choice } from "../run/useRuns";

type Props = { report: FailureReport; onChoose: (choice: Choice) => Promise<boolean> };

const CHOICES: Choice[] = ["retry", "skip", "replan", "abort"];

/** Shown while an execution waits for the analyst after a failure. */
export function RecoveryPanel({ report, onChoose }: Props) {
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const where = report.todoTitle
    ? t("recovery.where", {
        title: report.todoTitle,
        position: report.position ?? "?",
        total: report.planLen ?? "?",
      }) + (report.phase ? ` · ${t("recovery.phase", { phase: report.phase })}` : "")
    : t("recovery.nowhere");
  return (
    <div className="overlay">
      <div
        className="dialog recovery-panel"
        role="alertdialog"
        aria-modal="true"
        aria-label={t("recovery.label")}
        aria-describedby="recovery-why"
        data-testid="failure-recovery"
      >
        <h2>{t("recovery.label")}</h2>
        <dl>
          <dt>{t("recovery.whereLabel")}</dt>
          <dd data-testid="recovery-where">{where}</dd>
          <dt>{t("recovery.whyLabel")}</dt>
          <dd id="recovery-why" data-testid="recovery-why">
            <span className={`failure-class class-${report.class}`}>{report.class}</span> {report.message}
            {report.trigger && <span className="recovery-trigger"> ({report.trigger})</span>}
            {report.likelyCauses.length > 0 && (
              <ul>
                {report.likelyCauses.map((c, i) => (
                  <li key={i}>{c}</li>
                ))}
              </ul>
            )}
            {report.call && <code className="recovery-call">{report.call}</code>}
          </dd>
          <dt>{t("recovery.rolledBackLabel")}</dt>
          <dd data-testid="recovery-rolled-back">
            {report.rolledBack
              ? t("recovery.rolledBack", {
                  restored: report.filesRestored,
                  removed: report.filesRemoved,
                  messages: report.messagesRemoved,
                })
              : t("recovery.nothingRolledBack")}
          </dd>
          {report.suggestions.length > 0 && (
            <>
              <dt>{t("recovery.suggestionsLabel")}</dt>
              <dd data-testid="recovery-suggestions">
                {report.suggestions.map((s) => t(`recovery.choices.${s}`, { defaultValue: s })).join(" · ")}
              </dd>
            </>
          )}
        </dl>
        <div className="dialog-actions">
          {CHOICES.map((choice) => (
            <button
              key={choice}
              type="button"
              className={choice === report.suggestions[0] ? "button button-primary" : "button"}
              data-testid={`recovery-${choice}`}
              disabled={busy}
              onClick={() => {
                setBusy(true);
                void onChoose(choice).finally(() => setBusy(false));
              }}
            >
              {t(`recovery.choices.${choice}`)}
            </button>
          ))}
        </div>
      </div>
    </div>
  );
}
