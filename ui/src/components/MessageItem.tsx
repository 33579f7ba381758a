import { memo } from "react";
import { useTranslation } from "react-i18next";
import type { AnswerView, MessageView, RiskLevel } from "../bindings";
import { formatFullTime, formatMessageTime, formatNumber } from "../lib/format";
import { answerEndLabel } from "../lib/labels";
import { isShortResult } from "../lib/toolLine";
import { CopyButton } from "./CopyButton";
import { PinIcon } from "./Icons";
import { MessageContent } from "./MessageContent";
import { toolLabel } from "../lib/toolName";
import { ToolCallCard } from "./ToolCallCard";
import { namesImages, ToolImages } from "./ToolImages";

/** What can be done again from a message: edit the last one sent, regenerate the last answer. */
export type MessageAction = "edit" | "regenerate";

type Props = {
  message: MessageView;
  highlighted?: boolean;
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
  /** Set by a virtualized list: it measures the row and places it `start` pixels down. */
  ref?: (node: HTMLLIElement | null) => void;
  index?: number;
  start?: number;
};

/**
 * One stored message. Memoized: a scrolling list re-renders on every frame, and a row whose
 * message and place did not change must not parse its markdown again.
 */
export const MessageItem = memo(function MessageItem({ message, highlighted = false, ref, index, start, actions = NONE, onAction, onTogglePin, marks, reviewRisk, onOpenReview, onContinue, continueDisabled = false, briefFrom, conversationId }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const { seq, role, name, content, reasoning, toolCalls, toolCallId, tokens, pinned, createdAt } = message;

  return (
    <li
      ref={ref}
      data-index={index}
      style={start === undefined ? undefined : { transform: `translateY(${start}px)` }}
      className={`${index === undefined ? "" : "list-row "}message role-${role}${pinned ? " pinned" : ""}${highlighted ? " highlighted" : ""}`}
      data-testid="message"
      data-highlighted={highlighted ? "true" : undefined}
      data-seq={seq}
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
        (role === "tool" && isShortResult(content) ? (
          <MessageContent text={content} className="tool-output-short" testId="message-content" marks={marks} />
        ) : role === "tool" ? (
          // A long output: folded, with its first line and size in the summary.
          <details className="tool-output" data-testid="tool-output">
            <summary>
              <span className="tool-output-head">{firstLine(content)}</span>{" "}
              <span className="muted">{t("message.outputSize", { count: lineCount(content), chars: formatNumber(content.length, lang) })}</span>
            </summary>
            <MessageContent text={content} testId="message-content" />
          </details>
        ) : (
          <MessageContent text={content} testId="message-content" markdown={role === "assistant"} marks={marks} />
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
          {toolCalls.map((call) => (
            <ToolCallCard key={call.id} call={call} />
          ))}
        </div>
      )}
    </li>
  );
});

const NONE: readonly MessageAction[] = [];

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

/** The first non-empty line, cut to a summary's width. */
function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 120 ? `${line.slice(0, 120)}…` : line;
}

function lineCount(text: string): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < text.length - 1; i = text.indexOf("\n", i + 1)) n += 1;
  return n;
}
