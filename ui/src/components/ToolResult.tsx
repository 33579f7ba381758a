import { useContext } from "react";
import { useTranslation } from "react-i18next";
import type { MessageView, ToolCallView } from "../bindings";
import { SpotContext } from "../lib/figures";
import { formatNumber } from "../lib/format";
import { planChange, type PlanChange } from "../lib/planChange";
import { isToolError, SPAWN_SUBAGENT, subagentAnswer, subagentTask, TODO_WRITE } from "../lib/toolResult";
import { CopyButton } from "./CopyButton";
import { PinIcon } from "./Icons";
import { MessageContent } from "./MessageContent";
import { ToolOutput } from "./ToolOutput";
import { namesImages, ToolImages } from "./ToolImages";

type Props = {
  call: ToolCallView;
  /** The stored result of `call`. */
  result: MessageView;
  /** For a `todo_write` call: the arguments of the one before it (null when none is loaded). */
  planBefore: string | null;
  /** The conversation, for reading the images the result carries. */
  conversationId?: string;
  /** The list brought this result into view and marks it. */
  highlighted: boolean;
  /** A search's words to mark in its text. */
  marks?: readonly string[];
  /** Pins or unpins the result (it is a stored message of its own). */
  onTogglePin?: (message: MessageView) => void;
};

/**
 * A call's stored result, under the call's line on the same card: its number and size, then
 * what it says (a plan's change in words, a subagent's answer under its task, or the output,
 * folded when long), then any images it returned.
 */
export function ToolResult({ call, result, planBefore, conversationId, highlighted, marks, onTogglePin }: Props) {
  // A figure's source in this output, when the analyst opened it from an answer.
  const spot = useContext(SpotContext);
  const span = spot !== null && spot.seq === result.seq ? spot : undefined;
  return (
    <div
      className={`tool-result${highlighted ? " highlighted" : ""}${result.pinned ? " pinned" : ""}`}
      data-testid="tool-result"
      data-seq={result.seq}
      data-message-id={result.id}
      data-highlighted={highlighted ? "true" : undefined}
    >
      <ResultMeta result={result} onTogglePin={onTogglePin} />
      {result.content !== "" && <ResultBody call={call} content={result.content} planBefore={planBefore} marks={marks} span={span} />}
      {conversationId !== undefined && namesImages(result.content) && (
        <ToolImages conversationId={conversationId} callId={call.id} tool={result.name ?? call.name} />
      )}
    </div>
  );
}

/** The result's own line: its seq and tokens, whether it is pinned, Pin and Copy. */
function ResultMeta({ result, onTogglePin }: { result: MessageView; onTogglePin?: (message: MessageView) => void }) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  return (
    <div className="tool-result-meta">
      <span className="tool-result-label">{t("message.result")}</span>
      <span className="message-seq" data-testid="result-seq" title={result.toolCallId ?? undefined}>
        #{result.seq}
      </span>
      <span>{t("conversation.tokens", { count: result.tokens, formatted: formatNumber(result.tokens, lang) })}</span>
      {result.pinned && (
        <span className="pinned-marker" data-testid="pinned-marker" title={t("message.pinned")}>
          <PinIcon />
          {t("message.pinned")}
        </span>
      )}
      <span className="message-actions">
        {onTogglePin && (
          <button
            type="button"
            className="link-button"
            data-testid="result-pin"
            aria-pressed={result.pinned}
            title={result.pinned ? t("message.unpinHint") : t("message.pinHint")}
            onClick={() => onTogglePin(result)}
          >
            {result.pinned ? t("message.unpin") : t("message.pin")}
          </button>
        )}
        <CopyButton text={() => result.content} testId="copy-result" />
      </span>
    </div>
  );
}

/** What the result says, read the way its tool's results read best. */
function ResultBody({ call, content, planBefore, marks, span }: { call: ToolCallView; content: string; planBefore: string | null; marks?: readonly string[]; span?: { start: number; end: number; nonce: number } }) {
  const { t } = useTranslation();
  if (isToolError(content)) return <ToolOutput content={content} marks={marks} />;
  if (call.name === TODO_WRITE) {
    const change = planChange(planBefore, call.arguments);
    if (change !== null) {
      return (
        <>
          <PlanChangeLine change={change} />
          <details className="tool-output" data-testid="tool-output">
            <summary>{t("message.plan.stored")}</summary>
            <MessageContent text={content} testId="message-content" marks={marks} />
          </details>
        </>
      );
    }
  }
  if (call.name === SPAWN_SUBAGENT) return <SubagentAnswer task={subagentTask(call.arguments)} content={content} marks={marks} />;
  return <ToolOutput content={content} marks={marks} span={span} />;
}

/** A plan's change in words: "Added: Load the CSV · Done: Clean columns · Started: Fit the model". */
export function PlanChangeLine({ change }: { change: PlanChange[] }) {
  const { t } = useTranslation();
  const text =
    change.length === 0
      ? t("message.plan.unchanged")
      : change
          .map(({ kind, titles }) => t(`message.plan.${kind}`, { list: titles.join(t("message.plan.listSeparator")) }))
          .join(t("message.plan.groupSeparator"));
  return (
    <p className="plan-change" data-testid="plan-change">
      {text}
    </p>
  );
}

/** A subagent's answer under the task it was given; its id only in the tooltip. */
function SubagentAnswer({ task, content, marks }: { task: string | null; content: string; marks?: readonly string[] }) {
  const { t } = useTranslation();
  const { id, answer } = subagentAnswer(content);
  return (
    <>
      {task !== null && (
        <p className="subagent-task" data-testid="subagent-task" title={id ?? undefined}>
          <span className="subagent-task-label">{t("message.subagentTask")}</span> {task}
        </p>
      )}
      {id === null ? (
        <ToolOutput content={content} marks={marks} />
      ) : (
        <MessageContent text={answer} className="subagent-answer" testId="message-content" markdown marks={marks} />
      )}
    </>
  );
}
