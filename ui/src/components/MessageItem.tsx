import { memo, useContext } from "react";
import { useTranslation } from "react-i18next";
import type { AnswerView, FigureView, MessageView, RiskLevel } from "../bindings";
import { useFigures } from "../hooks/useFigures";
import { SpotContext } from "../lib/figures";
import { formatFullTime, formatMessageTime, formatNumber } from "../lib/format";
import { answerEndLabel } from "../lib/labels";
import { CopyButton } from "./CopyButton";
import { PinIcon } from "./Icons";
import { MessageContent } from "./MessageContent";
import { toolLabel } from "../lib/toolName";
import { ToolCallCard } from "./ToolCallCard";
import { namesImages, ToolImages } from "./ToolImages";
import { ToolOutput } from "./ToolOutput";
import { ToolResult } from "./ToolResult";

/** What can be done again from a message: edit the last one sent, regenerate the last answer. */
export type MessageAction = "edit" | "regenerate";

type Props = {
  message: MessageView;
  /** The seq the list brought into view and marks, when it is this message's or one of its results'. */
  highlightedSeq?: number;
  /** The stored result of each of its tool calls, by the call's index; null where none is loaded. */
  results?: readonly (MessageView | null)[];
  /** For each `todo_write` call, by index: the arguments of the loaded one before it, if any. */
  plansBefore?: readonly (string | null)[];
  /** The actions this message offers besides Copy (only the last ones have any). */
  actions?: readonly MessageAction[];
  onAction?: (action: MessageAction, message: MessageView) => void;
  /** The risk the final tenth-man review found in this answer, where it found some. */
  reviewRisk?: RiskLevel;
  /** Opens the review's findings. */
  onOpenReview?: () => void;
  /** A search's words to mark in the text (the message a search hit opened). */
  marks?: readonly string[];
  /** Pins or unpins the message (a pinned one is never compressed away). */
  onTogglePin?: (message: MessageView) => void;
  /** Continue, under an answer that was cut or stopped (only the newest one offers it). */
  onContinue?: () => void;
  /** Continue is there but cannot start a run now (one is working, the conversation is busy). */
  continueDisabled?: boolean;
  /** The title of the parent conversation whose brief this message is (a subagent's first). */
  briefFrom?: string;
  /** The conversation, for reading the images a tool result carries. */
  conversationId?: string;
  /** Opens the source of a figure of this answer. */
  onFigure?: (figure: FigureView) => void;
  /** Set by a virtualized list: it measures the row and places it `start` pixels down. */
  ref?: (node: HTMLLIElement | null) => void;
  index?: number;
  start?: number;
};

/**
 * One stored message, with the results of its tool calls on their calls' cards. Memoized: a
 * scrolling list re-renders on every frame, and a row whose message, results and place did not
 * change must not parse its markdown again.
 */
export const MessageItem = memo(function MessageItem({ message, highlightedSeq, results = NO_RESULTS, plansBefore = NO_PLANS, ref, index, start, actions = NONE, onAction, onTogglePin, marks, reviewRisk, onOpenReview, onContinue, continueDisabled = false, briefFrom, conversationId, onFigure }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const { seq, role, name, content, reasoning, toolCalls, toolCallId, tokens, pinned, createdAt } = message;
  // The row is marked as the one brought into view; the part marked is its text or a result.
  const highlighted = highlightedSeq !== undefined;
  const ownMarks = highlightedSeq === seq ? marks : undefined;
  const resultSeqs = results.flatMap((r) => (r === null ? [] : [r.seq]));
  const figures = useFigures(conversationId, message);
  const spot = useContext(SpotContext);
  const span = role === "tool" && spot !== null && spot.seq === seq ? spot : undefined;

  return (
    <li
      ref={ref}
      data-index={index}
      style={start === undefined ? undefined : { transform: `translateY(${start}px)` }}
      className={`${index === undefined ? "" : "list-row "}message role-${role}${pinned ? " pinned" : ""}${highlightedSeq === seq ? " highlighted" : ""}`}
      data-testid="message"
      data-highlighted={highlighted ? "true" : undefined}
      data-seq={seq}
      data-result-seqs={resultSeqs.length > 0 ? resultSeqs.join(" ") : undefined}
      data-role={role}
      data-message-id={message.id}
    >
      <div className="message-meta">
        <span className={`role-badge role-${briefFrom === undefined ? role : "brief"}`} data-testid="message-role">
          {briefFrom === undefined ? t(`message.roles.${role}`) : t("message.briefFrom", { title: briefFrom })}
        </span>
        {/* A tool result names its tool; the call's id stays in the tooltip. */}
        {name && (
          <span className="message-name" data-testid="message-name" title={toolCallId ?? undefined} data-tool={name}>
            {toolLabel(name).label}
          </span>
        )}
        <span className="message-seq" data-testid="message-seq">
          #{seq}
        </span>
        <span className="message-tokens">
          {t("conversation.tokens", { count: tokens, formatted: formatNumber(tokens, lang) })}
        </span>
        <time className="message-time" dateTime={createdAt} title={formatFullTime(createdAt, lang)}>
          {formatMessageTime(createdAt, lang)}
        </time>
        {pinned && (
          <span className="pinned-marker" data-testid="pinned-marker" title={t("message.pinned")}>
            <PinIcon />
            {t("message.pinned")}
          </span>
        )}
        <span className="message-actions">
          {actions.map((action) => (
            <button
              key={action}
              type="button"
              className="link-button"
              data-testid={`message-${action}`}
              onClick={() => onAction?.(action, message)}
            >
              {t(`message.actions.${action}`)}
            </button>
          ))}
          {onTogglePin && role !== "system" && (
            <button
              type="button"
              className="link-button"
              data-testid="message-pin"
              aria-pressed={pinned}
              title={pinned ? t("message.unpinHint") : t("message.pinHint")}
              onClick={() => onTogglePin(message)}
            >
              {pinned ? t("message.unpin") : t("message.pin")}
            </button>
          )}
          <CopyButton text={() => copyable(message)} testId="copy-message" />
        </span>
      </div>


      {reasoning !== null && reasoning !== "" && (
        <details className="reasoning" data-testid="reasoning">
          <summary>{t("message.reasoning")}</summary>
          <MessageContent text={reasoning} className="reasoning-content" testId="reasoning-content" />
        </details>
      )}

      {content !== "" &&
        (role === "tool" ? (
          <ToolOutput content={content} marks={ownMarks} span={span} />
        ) : (
          <MessageContent
            text={content}
            testId="message-content"
            markdown={role === "assistant"}
            marks={ownMarks}
            figures={figures}
            onFigure={onFigure}
          />
        ))}

      {role === "assistant" && reviewRisk && (
        <p className={`review-mark risk-${reviewRisk}`} data-testid="review-mark" data-risk={reviewRisk}>
          {t("review.mark", { level: t(`review.riskLevels.${reviewRisk}`) })}{" "}
          {onOpenReview && (
            <button type="button" className="link-button" data-testid="review-mark-open" onClick={onOpenReview}>
              {t("review.readFindings")}
            </button>
          )}
        </p>
      )}

      {role === "assistant" && message.answer && (
        <AnswerNotes answer={message.answer} onContinue={onContinue} continueDisabled={continueDisabled} />
      )}

      {role === "tool" && conversationId !== undefined && toolCallId !== null && namesImages(content) && (
        <ToolImages conversationId={conversationId} callId={toolCallId} tool={name ?? ""} />
      )}

      {toolCalls.length > 0 && (
        <div className="tool-calls" aria-label={t("message.toolCalls")}>
          {toolCalls.map((call, i) => {
            const result = results[i] ?? null;
            return (
              <ToolCallCard key={`${i}:${call.id}`} call={call}>
                {result && (
                  <ToolResult
                    call={call}
                    result={result}
                    planBefore={plansBefore[i] ?? null}
                    conversationId={conversationId}
                    highlighted={highlightedSeq === result.seq}
                    marks={highlightedSeq === result.seq ? marks : undefined}
                    onTogglePin={onTogglePin}
                  />
                )}
              </ToolCallCard>
            );
          })}
        </div>
      )}
    </li>
  );
}, sameProps);

const NONE: readonly MessageAction[] = [];
const NO_RESULTS: readonly (MessageView | null)[] = [];
const NO_PLANS: readonly (string | null)[] = [];

/** Whether a row would render the same: the list builds the result arrays anew each time, so
 *  they are compared item by item, everything else as it is. */
function sameProps(a: Props, b: Props): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)] as (keyof Props)[]);
  for (const key of keys) {
    if (key === "results") {
      if (!sameItems(a.results, b.results)) return false;
    } else if (key === "plansBefore") {
      if (!sameItems(a.plansBefore, b.plansBefore)) return false;
    } else if (!Object.is(a[key], b[key])) {
      return false;
    }
  }
  return true;
}

function sameItems<T>(a: readonly T[] | undefined, b: readonly T[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  return a.every((item, i) => Object.is(item, b[i]));
}

/**
 * What an answer's record says under its text: a quiet mark when it is not whole (cut by the
 * output limit, stopped, ended for looping), with Continue on a cut or stopped one that offers
 * it; and a warning when the server dropped part of the prompt it was asked with.
 */
function AnswerNotes({ answer, onContinue, continueDisabled }: { answer: AnswerView; onContinue?: () => void; continueDisabled: boolean }) {
  const { t } = useTranslation();
  const end = answerEndLabel(t, answer.ended);
  const continues = answer.ended === "cut" || answer.ended === "stopped";
  return (
    <>
      {answer.promptTruncated && (
        <p className="answer-warning" data-testid="prompt-truncated">
          {t("message.answer.promptTruncated")}
        </p>
      )}
      {end && (
        <p className="answer-end" data-testid="answer-end" data-ended={answer.ended}>
          <span className="answer-end-mark" title={end.hint} aria-description={end.hint}>
            {end.mark}
          </span>
          {continues && onContinue && (
            <button
              type="button"
              className="button button-small"
              data-testid="answer-continue"
              title={t("message.answer.continueHint")}
              disabled={continueDisabled}
              onClick={onContinue}
            >
              {t("message.answer.continue")}
            </button>
          )}
        </p>
      )}
    </>
  );
}

/** What Copy takes from a message: its text, or its tool calls when it has no text. */
function copyable(message: MessageView): string {
  if (message.content !== "") return message.content;
  return message.toolCalls.map((c) => `${c.name} ${c.arguments}`).join("\n");
}
