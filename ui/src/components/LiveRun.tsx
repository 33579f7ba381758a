import { toolLabel } from "../lib/toolName";
import { memo, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import type { AppError } from "../bindings";
import { warningText } from "../lib/runWarning";
import { toolLine } from "../lib/toolLine";
import type { LiveTool, RunState } from "../run/state";
import type { ApprovalAnswer } from "../run/useRuns";
import { useThrottled } from "../hooks/useThrottled";
import { ApprovalPrompt } from "./ApprovalPrompt";
import { MessageContent } from "./MessageContent";
import { ToolImages } from "./ToolImages";

function ToolCard({ tool, awaitingApproval, conversationId }: { tool: LiveTool; awaitingApproval: boolean; conversationId?: string }) {
  const { t } = useTranslation();
  const line = toolLine(tool.name, tool.arguments, (total, inProgress) => t("message.todoLine", { count: total, inProgress }));
  let args = tool.arguments;
  try {
    args = JSON.stringify(JSON.parse(tool.arguments), null, 2);
  } catch {
    // Shown as the model sent it.
  }
  return (
    <li className={`live-tool ${tool.done ? "done" : "running"}`} data-testid="live-tool-card" data-call-id={tool.callId}>
      <div className="live-tool-head">
        <span className="live-tool-name" data-tool={tool.name}>
          {toolLabel(tool.name).label}
        </span>
        {line.detail !== "" && <span className="tool-call-line" data-testid="live-tool-line">{line.detail}</span>}
        {!tool.done && (
          <span className="live-tool-running" data-testid="live-tool-state">
            {awaitingApproval ? t("run.awaitingApproval") : t("run.running")}
          </span>
        )}
        {tool.done && tool.exitCode !== null && (
          <span className={tool.exitCode === 0 ? "exit ok" : "exit bad"} data-testid="tool-exit-code">
            {t("run.exitCode", { code: tool.exitCode })}
          </span>
        )}
        {tool.done && tool.failureClass && <span className="exit bad">{tool.failureClass}</span>}
        {tool.done && !tool.ran && <span className="exit">{t("run.notRun")}</span>}
        {tool.durationMs !== null && <span className="live-tool-duration">{t("run.duration", { ms: tool.durationMs })}</span>}
      </div>
      <details className="live-tool-args">
        <summary>{t("run.arguments")}</summary>
        <pre>{args}</pre>
      </details>
      {tool.done && tool.images > 0 && conversationId !== undefined && (
        <ToolImages conversationId={conversationId} callId={tool.callId} tool={tool.name} />
      )}
    </li>
  );
}

/** Streamed text is drawn at most this often (its Markdown is parsed anew each time): within the
 *  50 ms a delta may take to reach the screen. */
const LIVE_TEXT_MS = 50;

/** The streamed text as drawn, with when Rust forwarded its newest delta. */
type Streamed = { text: string; deltaAt: number | null };

/** A cleared text, the first of a new one, or one that is not the drawn one grown, is drawn at once. */
function drawNow(next: Streamed, shown: Streamed): boolean {
  return next.text === "" || shown.text === "" || !next.text.startsWith(shown.text);
}

/** The answer as far as it has come, as Markdown; drawn again only when its text grew. */
const LiveAnswer = memo(function LiveAnswer({ text }: { text: string }) {
  return <MessageContent text={text} testId="live-content" markdown />;
});

/**
 * The answer the model is writing, read as the stored one will be (Markdown, under an
 * "Assistant" badge), or what the run is waiting for while there is none. Drawn at most every
 * `LIVE_TEXT_MS`, so a fast stream stays smooth; `data-delta-at` is the newest delta drawn.
 */
function LiveText({ text, deltaAt, awaiting }: { text: string; deltaAt: number | null; awaiting: boolean }) {
  const { t } = useTranslation();
  const streamed = useMemo(() => ({ text, deltaAt }), [text, deltaAt]);
  const shown = useThrottled(streamed, LIVE_TEXT_MS, drawNow);
  return (
    <div className="live-text" data-testid="live-text" data-delta-at={shown.deltaAt ?? undefined}>
      <div className="message-meta">
        <span className="role-badge role-assistant" data-testid="live-role">
          {t("message.roles.assistant")}
        </span>
      </div>
      {shown.text ? <LiveAnswer text={shown.text} /> : <span className="live-placeholder">{awaiting ? t("run.waiting") : t("run.thinking")}</span>}
    </div>
  );
}

/**
 * The status line while the final tenth-man review reads the answer, with Skip: the answer then
 * stands unreviewed and the run ends at once. Skip waits for the run to say so.
 */
function Reviewing({ onSkip }: { onSkip?: () => Promise<void> }) {
  const { t } = useTranslation();
  const [skipping, setSkipping] = useState(false);
  return (
    <div className="live-text live-reviewing" data-testid="live-text" data-state="reviewing" role="status">
      <span data-testid="live-reviewing">{t("run.reviewing")}</span>
      {onSkip && (
        <button
          type="button"
          className="button button-small"
          data-testid="skip-review"
          title={t("run.skipReviewHint")}
          disabled={skipping}
          onClick={() => {
            setSkipping(true);
            void onSkip().finally(() => setSkipping(false));
          }}
        >
          {t("run.skipReview")}
        </button>
      )}
    </div>
  );
}

/** What the running agent is doing right now: its streaming answer and its tool calls. */
export function LiveRun({
  run,
  conversationId,
  onOpenReview,
  onApprove,
  onSkipReview,
}: {
  run: RunState;
  /** The run's conversation, for reading what its tools returned. */
  conversationId?: string;
  onOpenReview?: () => void;
  onApprove?: (answer: ApprovalAnswer) => Promise<AppError | null>;
  /** Skips the final review that is running. */
  onSkipReview?: () => Promise<void>;
}) {
  const { t } = useTranslation();
  const showTools = run.tools.length > 0;
  if (!run.live && !run.contested && run.warnings.length === 0) return null;
  return (
    <section className="live-run" data-testid="live-run" aria-label={t("run.label")} aria-live="polite">
      {run.contested && (
        <p className="run-contested" data-testid="run-contested" role="status">
          {t("run.contested")}{" "}
          {onOpenReview && (
            <button type="button" className="link-button" data-testid="run-contested-open" onClick={onOpenReview}>
              {t("run.readReview")}
            </button>
          )}
        </p>
      )}
      {run.warnings.map((w, i) => (
        <p key={i} className="run-warning" data-testid="run-warning">
          {warningText(t, w)}
        </p>
      ))}
      {run.live && (
        <>
          {showTools && (
            <ol className="live-tools">
              {run.tools.map((tool) => (
                <ToolCard
                  key={tool.callId}
                  tool={tool}
                  awaitingApproval={run.approval?.callId === tool.callId}
                  conversationId={conversationId}
                />
              ))}
            </ol>
          )}
          {run.approval && onApprove && <ApprovalPrompt approval={run.approval} onAnswer={onApprove} />}
          {run.reasoning && (
            <details className="live-reasoning" data-testid="live-reasoning">
              <summary>{t("message.reasoning")}</summary>
              <pre>{run.reasoning}</pre>
            </details>
          )}
          {run.reviewing && !run.text ? (
            <Reviewing onSkip={onSkipReview} />
          ) : (
            <LiveText text={run.text} deltaAt={run.lastDeltaAt} awaiting={run.awaiting !== null} />
          )}
        </>
      )}
    </section>
  );
}
