import { useTranslation } from "react-i18next";
import type { ExecutionView } from "../bindings";
import { usePopover } from "../hooks/usePopover";
import { formatCompact, formatCost, formatFullTime, formatMessageTime, formatNumber, parseTime } from "../lib/format";
import { executionStatusLabel, riskLevelLabel } from "../lib/labels";

type Props = {
  /** The conversation's executions, as listed (roots and their subagents). */
  executions: ExecutionView[];
  /** Brings a run's first message into view. */
  onOpen: (seq: number) => void;
  /** Lists the files a run wrote: its messages are seqs `from` up to (not with) `to`. */
  onFiles?: (run: RunFiles) => void;
  /** Opens a run's own review. */
  onReview?: (executionId: string) => void;
};

/** The run whose files the workspace panel lists alone: its messages' seqs and its task. */
export type RunFiles = { executionId: string; from: number; to: number | null; task: string };

/** A run's length in words: "42 s", "3 min 5 s", "1 h 2 min". */
export function formatDuration(ms: number, t: (key: "runs.seconds" | "runs.minutes" | "runs.hours", o: Record<string, number>) => string): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return t("runs.seconds", { s });
  if (s < 3600) return t("runs.minutes", { m: Math.floor(s / 60), s: s % 60 });
  return t("runs.hours", { h: Math.floor(s / 3600), m: Math.floor((s % 3600) / 60) });
}

/**
 * The conversation's runs, newest first: each with its status, model calls, tokens in and out,
 * how long it took and its final review's risk. A click shows the run's messages.
 */
export function RunHistory({ executions, onOpen, onFiles, onReview }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const { open, setOpen, toggle, container, trigger } = usePopover();
  const runs = executions.filter((e) => e.depth === 0);
  return (
    <div className="run-history-wrap" ref={container}>
      <button
        ref={trigger}
        type="button"
        className="button"
        data-testid="run-history-button"
        aria-expanded={open}
        aria-haspopup="true"
        onClick={toggle}
      >
        {t("runs.button", { count: runs.length })}
      </button>
      {open && (
        <div className="run-history" role="region" aria-label={t("runs.label")} data-testid="run-history">
          {runs.length === 0 ? (
            <p className="muted">{t("runs.none")}</p>
          ) : (
            <ol className="run-list">
              {runs.map((run, i) => {
                // Newest first: the run after this one is the row above it.
                const next = runs.slice(0, i).reverse().find((r) => r.firstSeq !== null);
                const started = parseTime(run.startedAt ?? run.createdAt);
                const finished = run.finishedAt ? parseTime(run.finishedAt) : null;
                const duration = started && finished ? formatDuration(finished.getTime() - started.getTime(), t) : null;
                return (
                  <li key={run.id}>
                    <button
                      type="button"
                      className="run-row"
                      data-testid="run-row"
                      data-execution-id={run.id}
                      disabled={run.firstSeq === null}
                      onClick={() => {
                        if (run.firstSeq !== null) {
                          onOpen(run.firstSeq);
                          setOpen(false);
                        }
                      }}
                    >
                      <span className="run-row-head">
                        <span className={`run-status status-${run.status}`} data-testid="run-status">
                          {executionStatusLabel(t, run.status)}
                        </span>
                        <span className="run-task" title={run.task}>
                          {run.task}
                        </span>
                        {run.reviewRisk && (
                          <span className={`risk-badge risk-${run.reviewRisk}`} data-testid="run-risk">
                            {t("review.risk", { level: riskLevelLabel(t, run.reviewRisk) })}
                          </span>
                        )}
                      </span>
                      <span className="run-row-meta" data-testid="run-meta">
                        <time dateTime={run.startedAt ?? run.createdAt} title={formatFullTime(run.startedAt ?? run.createdAt, lang)}>
                          {formatMessageTime(run.startedAt ?? run.createdAt, lang)}
                        </time>
                        {duration && <span>{duration}</span>}
                        <span>{t("runs.calls", { count: run.modelCalls, formatted: formatNumber(run.modelCalls, lang) })}</span>
                        <span title={t("runs.tokensExact", { tokensIn: formatNumber(run.tokensIn, lang), tokensOut: formatNumber(run.tokensOut, lang) })}>
                          {t("runs.tokens", { tokensIn: formatCompact(run.tokensIn, lang), tokensOut: formatCompact(run.tokensOut, lang) })}
                        </span>
                        {run.cacheReadTokens > 0 && (
                          <span data-testid="run-cached" title={t("runs.cachedExact", { tokens: formatNumber(run.cacheReadTokens, lang) })}>
                            {t("runs.cached", { percent: run.cachedPercent })}
                          </span>
                        )}
                        {run.compressions > 0 && (
                          <span data-testid="run-compressions">{t("runs.compressions", { count: run.compressions })}</span>
                        )}
                        {run.costUsd !== null ? (
                          <span data-testid="run-cost" title={t("runs.costExact")}>
                            {t("runs.cost", { cost: formatCost(run.costUsd, lang) })}
                          </span>
                        ) : (
                          run.modelCalls > 0 && (
                            <span data-testid="run-cost-none" className="muted" title={t("runs.noCostWhy")}>
                              {t("runs.noCost")}
                            </span>
                          )
                        )}
                      </span>
                    </button>
                    {(onFiles || (onReview && run.reviewRisk)) && run.firstSeq !== null && (
                      <span className="run-row-actions">
                        {onFiles && (
                          <button
                            type="button"
                            className="link-button"
                            data-testid="run-files"
                            onClick={() => {
                              onFiles({ executionId: run.id, from: run.firstSeq!, to: next?.firstSeq ?? null, task: run.task });
                              setOpen(false);
                            }}
                          >
                            {t("runs.files")}
                          </button>
                        )}
                        {onReview && run.reviewRisk && (
                          <button
                            type="button"
                            className="link-button"
                            data-testid="run-review"
                            onClick={() => {
                              onReview(run.id);
                              setOpen(false);
                            }}
                          >
                            {t("runs.review")}
                          </button>
                        )}
                      </span>
                    )}
                  </li>
                );
              })}
            </ol>
          )}
        </div>
      )}
    </div>
  );
}
