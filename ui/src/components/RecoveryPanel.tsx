import { useId, useRef, useState } from "react";
import { useModal } from "../hooks/useModal";
import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import type { AppError, FailureReport, UnlinkedFigureView } from "../bindings";
import type { Choice } from "../run/useRuns";
import { TodoChanges } from "./TodoChanges";
import { failureClassLabel } from "../lib/labels";
import { formatNumber } from "../lib/format";

type Props = {
  report: FailureReport;
  /** What the analyst wants the agent to know with the choice; kept by the view, so text
   *  typed in the composer while the failure waited lands here. */
  guidance: string;
  onGuidanceChange: (text: string) => void;
  /** Resolves to the error that refused the choice, if any. `figures` names the unlinked
   *  figures a choice is for (from 1), with a correction's value. */
  onChoose: (choice: Choice, guidance: string, figures?: FigureChoice) => Promise<AppError | null>;
  /** Puts the panel aside (Escape) without choosing: the failure stays unresolved. */
  onDismiss: () => void;
};

/** A choice for some of a failure's unlinked figures: their numbers (from 1), and the value
 *  a correction puts in place. */
export type FigureChoice = { figures: number[]; value: string | null };

/** The choices that answer one figure, in the order the row shows them. */
const FIGURE_CHOICES: readonly Choice[] = ["verify", "estimate", "correct", "accept"];

/**
 * Shown while an execution waits for the analyst after a failure: where, why, what was rolled
 * back or what the todo changed, and exactly the choices this failure offers, best first. A
 * refused choice keeps the panel open and says why.
 */
export function RecoveryPanel({ report, guidance, onGuidanceChange, onChoose, onDismiss }: Props) {
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<AppError | null>(null);
  // A correction needs its value: with figures listed, it is made on each figure's row.
  const choices = report.figures.length > 0 ? report.suggestions.filter((c) => c !== "correct") : report.suggestions;

  const choose = async (choice: Choice, figures?: FigureChoice) => {
    setBusy(true);
    setError(null);
    const refused = await onChoose(choice, guidance, figures);
    setBusy(false);
    setError(refused);
  };

  const panel = useRef<HTMLDivElement>(null);
  // Focus lands on the first choice (the best), not on the Stop button behind the panel.
  useModal(panel, onDismiss, "[data-recovery-choice]");

  return (
    <div className="overlay">
      <div
        ref={panel}
        className="dialog recovery-panel"
        role="alertdialog"
        aria-modal="true"
        aria-label={t("recovery.label")}
        aria-describedby="recovery-why"
        data-testid="failure-recovery"
        data-failure-id={report.id}
      >
        <h2>{t("recovery.label")}</h2>
        <dl>
          <dt>{t("recovery.whereLabel")}</dt>
          <dd data-testid="recovery-where">
            <FailurePlace report={report} />
          </dd>
          <dt>{t("recovery.whyLabel")}</dt>
          <dd id="recovery-why" data-testid="recovery-why">
            <FailureCause report={report} />
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
          {report.changes && (
            <>
              <dt>{t("recovery.changesLabel")}</dt>
              <dd data-testid="recovery-changes">
                <TodoChanges changes={report.changes} />
              </dd>
            </>
          )}
        </dl>
        {error && (
          <p className="recovery-error" role="alert" data-testid="recovery-error" data-error-code={error.code}>
            {t("recovery.refused", { message: error.message })}
          </p>
        )}
        <label className="recovery-guidance">
          <span>{t("recovery.guidanceLabel")}</span>
          <textarea
            data-testid="recovery-guidance"
            rows={2}
            maxLength={8000}
            placeholder={t("recovery.guidancePlaceholder")}
            value={guidance}
            onChange={(e) => onGuidanceChange(e.target.value)}
          />
        </label>
        {report.figures.length > 0 && (
          <ol className="recovery-figures" aria-label={t("recovery.figuresLabel")} data-testid="recovery-figures">
            {report.figures.map((figure, i) => (
              <FigureRow
                key={`${report.id}:${i}`}
                figure={figure}
                offered={FIGURE_CHOICES.filter((c) => report.suggestions.includes(c))}
                disabled={busy}
                onChoose={(choice, value) => void choose(choice, { figures: [i + 1], value })}
              />
            ))}
          </ol>
        )}
        {report.figures.length > 1 && <p className="muted recovery-all">{t("recovery.forAll")}</p>}
        <ul className="recovery-choices" aria-label={t("recovery.choicesLabel")} data-testid="recovery-choices">
          {choices.map((choice, i) => (
            <ChoiceButton
              key={choice}
              choice={choice}
              servedWindow={report.servedWindow}
              primary={i === 0}
              disabled={busy}
              onChoose={(c) => void choose(c)}
            />
          ))}
        </ul>
      </div>
    </div>
  );
}

/** The todo the failure happened in, and its phase. */
function FailurePlace({ report }: { report: FailureReport }) {
  const { t } = useTranslation();
  if (!report.todoTitle) return <>{t("recovery.nowhere")}</>;
  const where = t("recovery.where", {
    title: report.todoTitle,
    position: report.position ?? "?",
    total: report.planLen ?? "?",
  });
  return <>{report.phase ? `${where} · ${t("recovery.phase", { phase: report.phase })}` : where}</>;
}

/** The failure's class, message, trigger, likely causes and the call that failed. */
function FailureCause({ report }: { report: FailureReport }) {
  const { t } = useTranslation();
  // The runtime's codes (`logic`, `step_budget`) in words; an unknown trigger as it came.
  return (
    <>
      <span className={`failure-class class-${report.class}`} data-class={report.class}>
        {failureClassLabel(t, report.class)}
      </span>{" "}
      {report.message}
      {report.trigger && (
        <span className="recovery-trigger" data-trigger={report.trigger}>
          {" "}
          ({t(`recovery.triggers.${report.trigger}`, { defaultValue: report.trigger })})
        </span>
      )}
      {report.likelyCauses.length > 0 && (
        <ul>
          {report.likelyCauses.map((c, i) => (
            <li key={i}>{c}</li>
          ))}
        </ul>
      )}
      {report.call && <code className="recovery-call">{report.call}</code>}
    </>
  );
}

/**
 * One offered choice, with a line saying what it does. `compress` names the window the server
 * said it serves, where the refusal named one: the analyst sees the number requests will fit.
 */
function ChoiceButton(props: {
  choice: Choice;
  servedWindow: number | null;
  primary: boolean;
  disabled: boolean;
  onChoose: (choice: Choice) => void;
}) {
  const { t, i18n } = useTranslation();
  const { choice, servedWindow } = props;
  const explanation = useId();
  const key = choice === "compress" && servedWindow ? "compressServed" : choice;
  const window = servedWindow ? formatNumber(servedWindow, i18n.language) : "";
  return (
    <li className="recovery-choice">
      <button
        type="button"
        className={props.primary ? "button button-primary" : "button"}
        data-testid={`recovery-${choice}`}
        data-recovery-choice
        aria-describedby={explanation}
        disabled={props.disabled}
        onClick={() => props.onChoose(choice)}
      >
        {t(`recovery.choices.${key}`, { window })}
      </button>
      <span id={explanation} className="recovery-choice-help">
        {t(`recovery.explain.${key}`, { window })}
      </span>
    </li>
  );
}

/** The sentence with the figure marked where it stands. */
function InSentence({ figure }: { figure: UnlinkedFigureView }) {
  const at = figure.sentence.indexOf(figure.text);
  if (at < 0) return <>{figure.sentence}</>;
  return (
    <>
      {figure.sentence.slice(0, at)}
      <mark className="figure figure-unlinked">{figure.text}</mark>
      {figure.sentence.slice(at + figure.text.length)}
    </>
  );
}

/**
 * One unlinked figure in its sentence, with the choices that answer it alone: verify, mark as
 * an estimate, correct (the value typed beside it) or accept.
 */
function FigureRow(props: {
  figure: UnlinkedFigureView;
  offered: readonly Choice[];
  disabled: boolean;
  onChoose: (choice: Choice, value: string | null) => void;
}) {
  const { t } = useTranslation();
  const [value, setValue] = useState("");
  const { figure } = props;
  return (
    <li className="recovery-figure" data-testid="recovery-figure">
      {figure.report !== null && (
        <p className="recovery-figure-report muted" data-testid="recovery-figure-report">
          {t("recovery.figureInReport", { path: figure.report })}
        </p>
      )}
      <p className="recovery-figure-sentence">
        <InSentence figure={figure} />
      </p>
      <div className="recovery-figure-choices">
        {props.offered.map((choice) =>
          choice === "correct" ? (
            <span key={choice} className="recovery-figure-correct">
              <input
                data-testid="recovery-figure-value"
                aria-label={t("recovery.figureValue", { figure: figure.text })}
                placeholder={figure.text}
                maxLength={64}
                value={value}
                onChange={(e) => setValue(e.target.value)}
              />
              <button
                type="button"
                className="button"
                data-testid="recovery-figure-correct"
                disabled={props.disabled || value.trim() === ""}
                onClick={() => props.onChoose("correct", value.trim())}
              >
                {t("recovery.choices.correct")}
              </button>
            </span>
          ) : (
            <button
              key={choice}
              type="button"
              className="button"
              data-testid={`recovery-figure-${choice}`}
              disabled={props.disabled}
              onClick={() => props.onChoose(choice, null)}
            >
              {figureChoiceLabel(t, choice)}
            </button>
          ),
        )}
      </div>
    </li>
  );
}

/** A figure row's button: shorter words than the choices for every figure. */
function figureChoiceLabel(t: TFunction, choice: Choice): string {
  switch (choice) {
    case "verify":
      return t("recovery.figureChoices.verify");
    case "estimate":
      return t("recovery.figureChoices.estimate");
    default:
      return t("recovery.figureChoices.accept");
  }
}
