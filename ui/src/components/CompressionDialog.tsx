import { useRef, useState } from "react";
import { useModal } from "../hooks/useModal";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type CompressionLevel, type CompressionPreview, type Strategy } from "../bindings";
import { InlineError } from "./InlineError";
import { formatNumber } from "../lib/format";
import { summaryLevelLabel } from "../lib/labels";

type Props = {
  conversationId: string;
  onClose: () => void;
  /** A compaction was stored: what it did, with its id for undo. */
  onDone: (applied: CompressionPreview) => void;
};

/** Compress context: preview what a level and strategy keep, then confirm. */
/** What the selects offer, to read their values back as the types the commands take (phase
 *  and checkpoint compactions are the runtime's own). */
const LEVELS = ["standard", "deep"] as const satisfies readonly CompressionLevel[];
const STRATEGIES = ["extract", "llm", "structured"] as const satisfies readonly Strategy[];

export function CompressionDialog({ conversationId, onClose, onDone }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const dialog = useRef<HTMLDivElement>(null);
  useModal(dialog, onClose);
  const [level, setLevel] = useState<CompressionLevel>("standard");
  const [strategy, setStrategy] = useState<Strategy>("extract");
  const [preview, setPreview] = useState<CompressionPreview | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<AppError | null>(null);

  const run = async (apply: boolean) => {
    setBusy(true);
    const res = await call(() =>
      apply
        ? commands.compressionApply(conversationId, level, strategy)
        : commands.compressionPreview(conversationId, level, strategy),
    );
    setBusy(false);
    // A failure is said in the dialog, where the preview or the confirmation was asked for.
    setError(res.status === "error" ? res.error : null);
    if (res.status === "error") return;
    if (apply) onDone(res.data);
    else setPreview(res.data);
  };

  return (
    <div className="overlay">
      <div ref={dialog} className="dialog compression-dialog" role="dialog" aria-modal="true" aria-label={t("compress.label")} data-testid="compress-context-dialog">
        <h2>{t("compress.label")}</h2>
        <div className="review-form">
          <label>
            {t("compress.level")}
            <select
              data-testid="compress-level"
              value={level}
              onChange={(e) => {
                setLevel(LEVELS.find((l) => l === e.target.value) ?? "standard");
                setPreview(null);
              }}
            >
              <option value="standard">{t("compress.standard")}</option>
              <option value="deep">{t("compress.deep")}</option>
            </select>
          </label>
          <label>
            {t("compress.strategy")}
            <select
              data-testid="compress-strategy"
              value={strategy}
              onChange={(e) => {
                setStrategy(STRATEGIES.find((k) => k === e.target.value) ?? "extract");
                setPreview(null);
              }}
            >
              <option value="extract">{t("compress.extract")}</option>
              <option value="llm">{t("compress.llm")}</option>
              <option value="structured">{t("compress.structured")}</option>
            </select>
          </label>
          <button type="button" className="button" data-testid="compress-preview" disabled={busy} onClick={() => void run(false)}>
            {t("compress.preview")}
          </button>
        </div>
        <InlineError error={error} testId="compress-error" />
        {preview && (
          <div className="compress-preview" data-testid="compress-preview-result">
            {preview.empty ? (
              <p>{t("compress.nothing")}</p>
            ) : (
              <>
                <p data-testid="compress-tokens">
                  {t("compress.tokens", {
                    before: formatNumber(preview.tokensBefore, lang),
                    after: formatNumber(preview.tokensAfter, lang),
                  })}
                </p>
                <p>{t("compress.verbatim", { count: preview.keptVerbatim.length })}</p>
                <ol className="compress-summaries">
                  {preview.summaries.map((s, i) => (
                    <li key={i} data-testid="compress-summary">
                      <p className="compress-summary-head">
                        {t("compress.summaryOf", { level: summaryLevelLabel(t, s.level), start: s.startSeq, end: s.endSeq, tokens: s.tokens })}
                      </p>
                      <pre>{s.text}</pre>
                    </li>
                  ))}
                </ol>
              </>
            )}
          </div>
        )}
        <div className="dialog-actions">
          <button type="button" className="button" data-testid="compress-cancel" onClick={onClose}>
            {t("compress.cancel")}
          </button>
          <button
            type="button"
            className="button button-primary"
            data-testid="compress-confirm"
            disabled={busy || !preview || preview.empty}
            onClick={() => void run(true)}
          >
            {t("compress.confirm")}
          </button>
        </div>
      </div>
    </div>
  );
}
