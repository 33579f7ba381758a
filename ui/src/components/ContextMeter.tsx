import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type ContextUsage } from "../bindings";
import { usePopover } from "../hooks/usePopover";
import { formatCompact, formatCost, formatNumber } from "../lib/format";

/** The colour bands of the meter: warn at 70%, compress at 85%, deep at 90%. */
export function meterState(percent: number): "ok" | "warn" | "compress" | "deep" {
  if (percent >= 90) return "deep";
  if (percent >= 85) return "compress";
  if (percent >= 70) return "warn";
  return "ok";
}

type Props = {
  conversationId: string;
  /** The usage a running step just reported (0..1), newer than the fetched one. */
  liveUsage: number | null;
  /** Changes whenever the conversation changed: the usage is fetched again. */
  /** Changes whenever the usage may have changed (messages stored, a compression, the settings). */
  refreshKey: string;
  /** Opens the compression dialog. */
  onCompress: () => void;
  /** Something the analyst opened lies where the warning floats (the Find bar): it waits. */
  quiet?: boolean;
};

/** Where a dismissal is kept: per conversation, so it holds across visits and restarts. */
const DISMISSED_KEY = "decima.contextWarningDismissed.";

function dismissedFor(conversationId: string): string | null {
  try {
    return window.localStorage.getItem(DISMISSED_KEY + conversationId);
  } catch {
    return null;
  }
}

/** How full the open conversation's context is, against the model's window, per layer. */
export function ContextMeter({ conversationId, liveUsage, refreshKey, onCompress, quiet = false }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [usage, setUsage] = useState<ContextUsage | null>(null);
  const { open, toggle, container, trigger } = usePopover();
  // The warning closes with its × or Escape, and comes back only when the context gets fuller:
  // the dismissal is remembered for the conversation, not for this visit.
  const [dismissed, setDismissedState] = useState<string | null>(() => dismissedFor(conversationId));
  useEffect(() => setDismissedState(dismissedFor(conversationId)), [conversationId]);
  const setDismissed = (state: string) => {
    setDismissedState(state);
    try {
      window.localStorage.setItem(DISMISSED_KEY + conversationId, state);
    } catch {
      // Storage can be unavailable; the dismissal then holds for this visit.
    }
  };
  // No provider in force: said here, beside where the meter would be, not as an error banner.
  const [noProvider, setNoProvider] = useState<string | null>(null);
  // Any other failure to measure is said in the meter's place too.
  const [failure, setFailure] = useState<AppError | null>(null);

  useEffect(() => {
    let alive = true;
    void (async () => {
      const res = await call(() => commands.contextUsage(conversationId));
      if (!alive) return;
      if (res.status === "ok") {
        setUsage(res.data);
        setNoProvider(null);
        setFailure(null);
      } else if (res.error.code === "no_provider" || res.error.code === "no_default_provider") {
        setUsage(null);
        setNoProvider(res.error.code === "no_default_provider" ? "several" : "none");
        setFailure(null);
      } else setFailure(res.error);
    })();
    return () => {
      alive = false;
    };
  }, [conversationId, refreshKey]);

  const fraction = liveUsage ?? usage?.usage ?? null;
  if (fraction === null && noProvider) {
    return (
      <p className="context-no-provider" data-testid="context-no-provider" role="status">
        {noProvider === "several" ? t("context.noDefaultProvider") : t("context.noProvider")}
      </p>
    );
  }
  if (fraction === null && failure) {
    return (
      <p className="context-no-provider context-failed" data-testid="context-failed" role="alert" title={failure.message}>
        {t("context.failed")}
      </p>
    );
  }
  if (fraction === null) return null;
  const percent = Math.round(fraction * 100);
  const state = meterState(percent);
  const rank = ["ok", "warn", "compress", "deep"];
  const warningShown = state !== "ok" && (dismissed === null || rank.indexOf(state) > rank.indexOf(dismissed));

  return (
    <div className="context-meter-wrap" ref={container}>
      <div
        className={`context-meter state-${state}`}
        role="meter"
        aria-label={t("context.label")}
        aria-valuenow={percent}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuetext={t("context.valueText", { percent })}
        data-testid="context-usage"
        data-state={state}
        title={t("context.hint")}
      >
        <meter className="context-meter-bar" min={0} max={100} low={70} high={85} optimum={0} value={Math.min(percent, 100)} />
        <span className="context-meter-text">{percent}%</span>
      </div>
      <button
        type="button"
        className="button button-small"
        aria-expanded={open}
        ref={trigger}
        data-testid="context-breakdown-toggle"
        onClick={toggle}
      >
        {t("context.breakdown")}
      </button>
      {warningShown && !open && !quiet && (
        <p
          className={`context-warning state-${state}`}
          data-testid="context-warning"
          role="status"
          onKeyDown={(e) => {
            if (e.key === "Escape") setDismissed(state);
          }}
        >
          {state === "warn" ? t("context.warn") : t("context.compressing")}{" "}
          <button type="button" className="link-button" data-testid="context-compress" onClick={onCompress}>
            {t("compress.open")}
          </button>
          <button
            type="button"
            className="context-warning-close"
            data-testid="context-warning-close"
            aria-label={t("context.dismissWarning")}
            title={t("context.dismissWarning")}
            onClick={() => setDismissed(state)}
          >
            ×
          </button>
        </p>
      )}
      {open && usage && (
        <div className="context-breakdown" data-testid="context-breakdown">
          <p>
            {t("context.total", {
              used: formatCompact(usage.tokens, lang),
              room: formatCompact(usage.inputRoom, lang),
              window: formatCompact(usage.window, lang),
            })}
          </p>
          <ul>
            {usage.layers.map((layer) => (
              <li key={layer.name} data-testid="context-layer" data-layer={layer.name}>
                <span className="context-layer-name">{t(`context.layers.${layer.name}`, { defaultValue: layer.name })}</span>
                <meter className="context-layer-bar" min={0} max={Math.max(usage.inputRoom, 1)} value={layer.tokens} aria-hidden="true" />
                <span className="context-layer-tokens">{formatNumber(layer.tokens, lang)}</span>
              </li>
            ))}
          </ul>
          {usage.cachedPercent !== null && (
            <p data-testid="context-cache-share">{t("context.cacheShare", { percent: usage.cachedPercent })}</p>
          )}
          {usage.costUsd === null && usage.chatCostUsd === null && usage.cachedPercent !== null && (
            // Runs were made, none of them priced: said, rather than left out or shown as $0.
            <p data-testid="context-cost-none" className="muted">
              {t("context.noCost")}
            </p>
          )}
          {(usage.costUsd !== null || usage.chatCostUsd !== null) && (
            // What the runs cost beside what the chat turns outside them cost; either is left out
            // when none of its calls was priced.
            <p data-testid="context-cost" title={t("context.costExact")}>
              {usage.costUsd !== null && (
                <span data-testid="context-cost-runs">{t("context.costRuns", { cost: formatCost(usage.costUsd, lang) })}</span>
              )}
              {usage.costUsd !== null && usage.chatCostUsd !== null && " · "}
              {usage.chatCostUsd !== null && (
                <span data-testid="context-cost-chat">{t("context.costChat", { cost: formatCost(usage.chatCostUsd, lang) })}</span>
              )}
            </p>
          )}
          <button type="button" className="button button-small" data-testid="breakdown-compress" onClick={onCompress}>
            {t("compress.open")}
          </button>
        </div>
      )}
    </div>
  );
}
