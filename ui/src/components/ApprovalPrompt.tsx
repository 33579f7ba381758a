import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { AppError } from "../bindings";
import type { PendingApproval } from "../run/state";
import type { ApprovalAnswer } from "../run/useRuns";

type Props = {
  approval: PendingApproval;
  /** Resolves to the error that refused the answer, if any. */
  onAnswer: (answer: ApprovalAnswer) => Promise<AppError | null>;
};

const ANSWERS: ApprovalAnswer[] = ["once", "conversation", "always", "deny"];

/**
 * An MCP call waits for the analyst, in the run's own view: the server, the tool, its
 * arguments and what the server says about it (a claim, shown, never trusted), then the four
 * answers. The run goes on once one is given.
 */
export function ApprovalPrompt({ approval, onAnswer }: Props) {
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<AppError | null>(null);
  const first = useRef<HTMLButtonElement>(null);
  let args = approval.arguments;
  try {
    args = JSON.stringify(JSON.parse(approval.arguments), null, 2);
  } catch {
    // Shown as the model sent it.
  }
  // The question takes the focus when it appears, so the keyboard answers it.
  useEffect(() => {
    first.current?.focus();
  }, [approval.callId]);

  const answer = async (a: ApprovalAnswer) => {
    setBusy(true);
    setError(null);
    const refused = await onAnswer(a);
    setBusy(false);
    setError(refused);
  };

  return (
    <div
      className="approval-prompt"
      role="group"
      aria-label={t("run.approval.label")}
      data-testid="approval-prompt"
      data-call-id={approval.callId}
    >
      <p className="approval-title">{t("run.approval.title", { server: approval.server, tool: approval.tool })}</p>
      {approval.readOnly === true && <p className="approval-hint">{t("run.approval.readOnly")}</p>}
      {approval.destructive === true && <p className="approval-hint approval-danger">{t("run.approval.destructive")}</p>}
      <details className="approval-args" open>
        <summary>{t("run.approval.arguments")}</summary>
        <pre>{args}</pre>
      </details>
      <div className="approval-answers">
        {ANSWERS.map((a, i) => (
          <button
            key={a}
            ref={i === 0 ? first : undefined}
            type="button"
            className={a === "deny" ? "button button-small" : "button button-small button-primary"}
            data-testid={`approval-${a}`}
            disabled={busy}
            onClick={() => void answer(a)}
          >
            {t(`run.approval.${a}`)}
          </button>
        ))}
      </div>
      {error && (
        <p className="inline-error" role="alert">
          {error.message}
        </p>
      )}
    </div>
  );
}
