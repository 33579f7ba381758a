import { useEffect, useRef, useState } from "react";
import { useSheet } from "../hooks/useModal";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type FindingView, type MessageView, type ReviewView } from "../bindings";
import { useFigures } from "../hooks/useFigures";
import { riskLevelLabel, severityLabel } from "../lib/labels";
import { withoutCliFlags } from "../lib/runWarning";

type Props = {
  conversationId: string;
  /** Opens on this run's review (a row of the run history) rather than the newest. */
  executionId?: string | null;
  /** The newest answer, whose figures the analyst may mark for a recompute. */
  answer?: MessageView | null;
  onClose: () => void;
  onEvidence: (seq: number) => void;
};

function Finding({ finding, onEvidence }: { finding: FindingView; onEvidence: (seq: number) => void }) {
  const { t } = useTranslation();
  return (
    <li className={`finding severity-${finding.severity}`} data-testid="finding">
      <h4>
        <span className="finding-severity">{severityLabel(t, finding.severity)}</span> {finding.title}
      </h4>
      <p>{finding.argument}</p>
      <p className="finding-recommendation">
        <strong>{t("review.recommendation")}</strong> {finding.recommendation}
      </p>
      {finding.evidenceSeqs.length > 0 && (
        <p className="finding-evidence-list">
          {t("review.evidence")}{" "}
          {finding.evidenceSeqs.map((seq) => (
            <button
              key={seq}
              type="button"
              className="link-button"
              data-testid="finding-evidence"
              data-seq={seq}
              onClick={() => onEvidence(seq)}
            >
              #{seq}
            </button>
          ))}
        </p>
      )}
    </li>
  );
}

/**
 * The newest answer's figures, each with a box to mark it: the tenth man recomputes the marked
 * ones beside those no output supports and the headline ones. Numbered as `decima execution
 * numbers` numbers them.
 */
function FigureMarks({
  conversationId,
  answer,
  marked,
  onChange,
}: {
  conversationId: string;
  answer: MessageView;
  marked: readonly number[];
  onChange: (marked: number[]) => void;
}) {
  const { t } = useTranslation();
  const figures = useFigures(conversationId, answer);
  if (!figures || figures.length === 0) return null;
  return (
    <fieldset className="review-figure-marks" data-testid="review-figure-marks">
      <legend>{t("review.markFigures")}</legend>
      {figures.map((f, i) => {
        const number = i + 1;
        const checked = marked.includes(number);
        return (
          <label key={`${f.start}:${f.text}`} className="review-figure-mark">
            <input
              type="checkbox"
              data-testid="review-figure-mark"
              data-number={number}
              checked={checked}
              onChange={() => onChange(checked ? marked.filter((n) => n !== number) : [...marked, number].sort((a, b) => a - b))}
            />
            <span className={`figure-status figure-${f.status}`}>{f.text}</span>
            <span className="muted"> {t(`review.figureStatus.${f.status}` as "review.figureStatus.linked", { defaultValue: f.status })}</span>
          </label>
        );
      })}
    </fieldset>
  );
}

/** The tenth man: an adversarial review of the whole conversation, on demand. */
export function TenthManDialog({ conversationId, executionId = null, answer = null, onClose, onEvidence }: Props) {
  const { t, i18n } = useTranslation();
  const sheet = useRef<HTMLDivElement>(null);
  useSheet(sheet, onClose);
  const [type, setType] = useState("full");
  const [focus, setFocus] = useState("");
  const [marked, setMarked] = useState<number[]>([]);
  const [busy, setBusy] = useState(false);
  const [review, setReview] = useState<ReviewView | null>(null);
  // The panel opens on the newest stored review; the form for a new one is a button away.
  const [loaded, setLoaded] = useState(false);
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const lang = i18n.resolvedLanguage ?? "en";

  useEffect(() => {
    let alive = true;
    void (async () => {
      const res = await call(() => commands.reviewLatest(conversationId, executionId));
      if (!alive) return;
      if (res.status === "ok") setReview(res.data);
      else setError(res.error.message);
      setLoaded(true);
    })();
    return () => {
      alive = false;
    };
  }, [conversationId, executionId]);

  const start = async (kind: string = type) => {
    setBusy(true);
    setError(null);
    const res = await call(() =>
      commands.reviewRun(
        conversationId,
        kind,
        kind === "recompute" ? null : focus.trim() || null,
        kind === "recompute" ? marked : [],
      ),
    );
    setBusy(false);
    if (res.status === "ok") {
      setReview(res.data);
      setAsking(false);
    } else setError(res.error.message);
  };
  const showForm = loaded && (asking || review === null);

  return (
    <div className="side-sheet">
      <div
        ref={sheet}
        className="dialog review-dialog"
        role="dialog"
        aria-modal="false"
        aria-label={t("review.label")}
        data-testid="tenth-man-review-dialog"
      >
        <h2>{t("review.label")}</h2>
        {loaded && review === null && (
          <p className="muted" data-testid="review-none">
            {t("review.none")}
          </p>
        )}
        {showForm && (
          <>
          <div className="review-form">
            <label>
              {t("review.type")}
              <select data-testid="review-type" value={type} onChange={(e) => setType(e.target.value)}>
                <option value="full">{t("review.full")}</option>
                <option value="quick">{t("review.quick")}</option>
                <option value="recompute">{t("review.recompute")}</option>
              </select>
            </label>
            {type === "recompute" ? (
              <>
                <p className="muted" data-testid="review-recompute-hint">
                  {t("review.recomputeHint")}
                </p>
                {answer && <FigureMarks conversationId={conversationId} answer={answer} marked={marked} onChange={setMarked} />}
              </>
            ) : (
              <label>
                {t("review.focus")}
                <input
                  data-testid="review-focus"
                  value={focus}
                  placeholder={t("review.focusPlaceholder")}
                  onChange={(e) => setFocus(e.target.value)}
                />
              </label>
            )}
            <button type="button" className="button button-primary" data-testid="review-start" disabled={busy} onClick={() => void start()}>
              {busy ? t("review.running") : t("review.start")}
            </button>
          </div>
            {error && (
              <p className="review-error" role="alert" data-testid="review-error">
                {withoutCliFlags(t, error)}
              </p>
            )}
          </>
        )}
        {!showForm && loaded && (
          <div className="review-actions">
            <button type="button" className="button" data-testid="review-new" onClick={() => setAsking(true)}>
              {t("review.new")}
            </button>
            <button
              type="button"
              className="button"
              data-testid="review-recompute"
              disabled={busy}
              title={t("review.recomputeHint")}
              onClick={() => void start("recompute")}
            >
              {busy ? t("review.running") : t("review.recompute")}
            </button>
          </div>
        )}
        {!showForm && error && (
          <p className="review-error" role="alert" data-testid="review-error">
            {withoutCliFlags(t, error)}
          </p>
        )}
        {review && (
          <div className="review-result" data-testid="review-result">
            <p className="review-when" data-testid="review-when">
              {t(`review.trigger.${review.trigger}`, { defaultValue: review.trigger })} ·{" "}
              {t("review.through", { seq: review.reviewedThroughSeq })} ·{" "}
              {new Date(review.createdAt).toLocaleString(lang === "zh" ? "zh-CN" : "en")}
            </p>
            <p className={`review-risk risk-${review.riskLevel}`} data-testid="review-risk" data-risk={review.riskLevel}>
              {t("review.risk", { level: riskLevelLabel(t, review.riskLevel) })}
              {review.cached && <span className="review-cached"> · {t("review.cached")}</span>}
            </p>
            <p>{review.summary}</p>
            {review.findings.length === 0 ? (
              <p>{t("review.noFindings")}</p>
            ) : (
              <ol className="findings">
                {review.findings.map((f) => (
                  <Finding key={f.id} finding={f} onEvidence={onEvidence} />
                ))}
              </ol>
            )}
            {review.openQuestions.length > 0 && (
              <>
                <h3>{t("review.openQuestions")}</h3>
                <ul>
                  {review.openQuestions.map((q, i) => (
                    <li key={i}>{q}</li>
                  ))}
                </ul>
              </>
            )}
            {review.earlierOpenFindings.length > 0 && (
              <>
                <h3>{t("review.earlier")}</h3>
                <ol className="findings earlier" data-testid="earlier-findings">
                  {review.earlierOpenFindings.map((f) => (
                    <Finding key={f.id} finding={f} onEvidence={onEvidence} />
                  ))}
                </ol>
              </>
            )}
          </div>
        )}
        <div className="dialog-actions">
          <button type="button" className="button" data-testid="review-close" onClick={onClose}>
            {t("review.close")}
          </button>
        </div>
      </div>
    </div>
  );
}
