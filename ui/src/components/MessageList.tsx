import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useEffect, useEffectEvent, useMemo, useRef, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import type { AnsweredFailure, CompactionMarker, FigureView, MessageView, RiskLevel, RunEndingView } from "../bindings";
import { useFollowEnd } from "../hooks/useFollowEnd";
import { SpotContext, type Spot } from "../lib/figures";
import { endedText } from "../lib/runEnding";
import { parsesAsMarkdown } from "./MessageContent";
import { MessageItem, type MessageAction } from "./MessageItem";
import { compactionTriggerLabel, compressionLevelLabel, failureClassLabel } from "../lib/labels";
import { callKey, pairResults, plansBefore } from "../lib/transcript";

const EDIT: readonly MessageAction[] = ["edit"];
const REGENERATE: readonly MessageAction[] = ["regenerate"];

/** A run the analyst ended, and where: its row follows the last message stored before it ended. */
export type RunEnd = { executionId: string; ending: RunEndingView };

/** A failure the analyst answered: its row says what failed, what was rolled back, the choice. */
export type Answered = { executionId: string; answered: AnsweredFailure };

/**
 * A stored message's row. An assistant message carries the loaded results of its tool calls
 * (by the call's index, null where none is loaded), shown on the calls' cards rather than as
 * rows of their own, and for each `todo_write` call the plan the one before it sent.
 */
type MessageRow = {
  kind: "message";
  key: string;
  message: MessageView;
  results: readonly (MessageView | null)[];
  plansBefore: readonly (string | null)[];
};

/**
 * One row of the list: a stored message, the marker of a compaction whose summary ends there,
 * where the analyst stopped or aborted a run, or where they answered a failure.
 */
type Row =
  | { kind: "marker"; key: string; marker: CompactionMarker }
  | MessageRow
  | { kind: "ended"; key: string; end: RunEnd }
  | { kind: "answered"; key: string; answer: Answered };

const NO_RESULTS: readonly (MessageView | null)[] = [];
const NO_PLANS: readonly (string | null)[] = [];

/**
 * Rows in reading order: each marker stands before the first message after its summary's end;
 * each run's end follows the last message at or before its seq (when that message is loaded).
 * A tool result joins its call's card when only other results stand between them; one whose
 * call is not loaded, or is across a marker or a run's end, keeps a row of its own.
 */
export function rowsOf(messages: MessageView[], markers: CompactionMarker[], ends: RunEnd[] = [], answers: Answered[] = []): Row[] {
  const pairs = pairResults(messages);
  const plans = plansBefore(messages, pairs);
  const rows: Row[] = [];
  // The assistant row whose calls' results may still join it.
  let open: { row: MessageRow; results: (MessageView | null)[] } | null = null;
  messages.forEach((message, i) => {
    const previousSeq = i === 0 ? null : (messages[i - 1]?.seq ?? null);
    for (const marker of markers) {
      if (marker.endSeq !== null && marker.endSeq < message.seq && (previousSeq === null || marker.endSeq >= previousSeq)) {
        rows.push({ kind: "marker", key: `k:${marker.id}`, marker });
        open = null;
      }
    }
    const place = pairs.get(message.id);
    if (place && open?.row.message === place.message) {
      open.results[place.index] = message;
    } else {
      const { row, results } = messageRow(message, plans);
      rows.push(row);
      open = results.length > 0 ? { row, results } : null;
    }
    const nextSeq = messages[i + 1]?.seq ?? null;
    for (const answer of answers) {
      const after = answer.answered.afterSeq;
      if (after >= message.seq && (nextSeq === null || after < nextSeq)) {
        rows.push({ kind: "answered", key: `a:${answer.answered.report.id}`, answer });
        open = null;
      }
    }
    for (const end of ends) {
      const after = end.ending.afterSeq;
      if (after >= message.seq && (nextSeq === null || after < nextSeq)) {
        rows.push({ kind: "ended", key: `e:${end.executionId}`, end });
        open = null;
      }
    }
  });
  return rows;
}

/** A message's row, with a slot for each of its calls' results (filled as they are read). */
function messageRow(message: MessageView, plans: ReadonlyMap<string, string | null>): { row: MessageRow; results: (MessageView | null)[] } {
  const calls = message.role === "assistant" ? message.toolCalls : [];
  const results = calls.map((): MessageView | null => null);
  const keys = calls.map((_, n) => callKey(message, n));
  const row: MessageRow = {
    kind: "message",
    key: `m:${message.id}`,
    message,
    results: results.length > 0 ? results : NO_RESULTS,
    plansBefore: keys.some((k) => plans.has(k)) ? keys.map((k) => plans.get(k) ?? null) : NO_PLANS,
  };
  return { row, results };
}

/** The last seq a row shows: its message's, or its last loaded result's. */
function lastSeqOf(row: MessageRow): number {
  return row.results.reduce((last, r) => (r !== null && r.seq > last ? r.seq : last), row.message.seq);
}

/** The seq of a row's message or results that the list marks, if it holds the marked one. */
function highlightedIn(row: MessageRow, seq: number | undefined): number | undefined {
  if (seq === undefined) return undefined;
  return row.message.seq === seq || row.results.some((r) => r?.seq === seq) ? seq : undefined;
}

/** A message to bring into view and mark; the nonce lets the same message be asked for again. */
export type Mark = { seq: number; nonce: number; /** A search's words, marked in the message. */ words?: readonly string[] };

/** A first guess at a row's height before it is measured; messages vary, markers are short. */
const ESTIMATE_PX = 120;
/** Rows rendered beyond the viewport on each side, so a fast scroll does not show blanks. */
const OVERSCAN = 6;
/** Within this many pixels of the top (or the bottom), the page above (or below) is read. */
const READ_EARLIER_PX = 400;
const READ_LATER_PX = 400;
/** After a jump, scroll events are the jump settling, not the reader: no page is read for this
 *  long, or a page read above would shift the rows under the scroll that is still landing. */
const JUMP_SETTLE_MS = 400;
type Props = {
  conversationId: string;
  messages: MessageView[];
  markers: CompactionMarker[];
  /** Runs the analyst stopped or aborted, shown where they ended. */
  ends?: RunEnd[];
  /** Failures the analyst answered, shown where they chose. */
  answers?: Answered[];
  /** The message to bring into view and highlight, if any. */
  highlighted: Mark | null;
  onUndo: (compactionId: string) => void;
  /** Reads the page above the first loaded message. */
  loadEarlier: () => Promise<boolean>;
  /** Newer messages exist below the loaded ones: the view jumped away from the end. */
  hasLater?: boolean;
  /** Reads the page below the last loaded message. */
  loadLater?: () => Promise<boolean>;
  /** "Jump to latest" when the newest messages are not loaded: read them, then go there. */
  onJumpToEnd?: () => void;
  /** Bumped when the first messages were loaded to be shown: the view goes to the top. */
  startRequest?: number;
  /** Bumped when the newest messages were loaded to be shown: the view goes to the end. */
  endRequest?: number;
  /** Shown instead of the list when there is nothing to list (loading, empty). */
  placeholder: ReactNode | null;
  /** What follows the stored messages: the live run. */
  footer: ReactNode;
  /** Changes whenever the footer grows (streamed text, a new tool card). */
  footerKey: unknown;
  /** Whether this window runs something here; when a run starts, the view goes to its end. */
  runLive?: boolean;
  /** The last message sent and the answer to it, which can be edited or regenerated. */
  rerunnable?: { userSeq: number; answerSeq: number | null } | null;
  /** A subagent's first message is its parent's brief: where it is and whose. */
  brief?: { seq: number; from: string } | null;
  /** Stable across renders, so rows stay memoized. */
  onMessageAction?: (action: MessageAction, message: MessageView) => void;
  /** The risk each reviewed answer's final review found, by the answer's seq (medium and up). */
  reviewMarks?: ReadonlyMap<number, RiskLevel>;
  /** Opens the tenth man's findings. */
  onOpenReview?: () => void;
  /** Pins or unpins a message. */
  onTogglePin?: (message: MessageView) => void;
  /** The newest answer, when it was cut or stopped: it offers Continue (disabled while Send is). */
  continuable?: { seq: number; disabled: boolean } | null;
  /** Starts the run that continues it; stable across renders. */
  onContinue?: () => void;
  /** Opens a figure's source; stable across renders. */
  onFigure?: (figure: FigureView) => void;
  /** A figure's source to highlight in its tool output. */
  spot?: Spot | null;
};

/**
 * The conversation's messages, virtualized: only the rows near the viewport are in the DOM, so a
 * conversation with 100k messages stays as light as a short one however far up the reader goes.
 * It opens at its end and follows new messages and the live run while the reader is there
 * (`useFollowEnd`); once they scroll away it stays put and offers "Jump to latest". Rows read
 * above keep what is in view where it was (the virtualizer anchors on the end).
 */
export function MessageList(props: Props) {
  const { conversationId, messages, markers, highlighted, onUndo, loadEarlier, placeholder } = props;
  const scrollRef = useRef<HTMLDivElement>(null);
  const { ends, answers } = props;
  const rows = useMemo(() => rowsOf(messages, markers, ends, answers), [messages, markers, ends, answers]);
  // The answers in Markdown are parsed ahead of their rows, newest first: the list opens at its
  // end and reads earlier pages as it is scrolled up, so the rows nearest the view come first.
  useEffect(() => {
    const texts = messages
      .filter((m) => m.role === "assistant" && parsesAsMarkdown(m.content))
      .map((m) => m.content)
      .reverse();
    if (texts.length > 0) void import("./MarkdownText").then((markdown) => markdown.prepare(texts));
  }, [messages]);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ESTIMATE_PX,
    getItemKey: (index) => rows[index]?.key ?? index,
    overscan: OVERSCAN,
    anchorTo: "end",
    useFlushSync: false,
  });
  const totalSize = virtualizer.getTotalSize();

  const listRef = useRef<HTMLOListElement>(null);
  const footerRef = useRef<HTMLDivElement>(null);
  const reading = useRef(false);
  const settleUntil = useRef(0);
  const settle = () => {
    settleUntil.current = performance.now() + JUMP_SETTLE_MS;
  };
  const follow = useFollowEnd({
    scrollRef,
    listRef,
    footerRef,
    currentListHeight: () => virtualizer.getTotalSize(),
    conversationId,
    contentKey: `${rows.length}:${totalSize}:${String(props.footerKey)}`,
    listShown: placeholder === null,
    detached: props.hasLater ?? false,
  });

  // A run started here (a task sent, a choice made, a resume): show it from its start.
  // Each of these moves the view once, when its request changes: effect events read the rows
  // and the follower as they are then, so rows read meanwhile never pull the view back.
  const jumpToEnd = useEffectEvent(() => follow.jumpToEnd());
  const scrollToRow = useEffectEvent((index: number, align: "start" | "center") => {
    follow.release();
    settle();
    virtualizer.scrollToIndex(index, { align });
  });
  const citedRow = useEffectEvent((seq: number) => {
    const index = rows.findIndex((r) => r.kind === "message" && lastSeqOf(r) >= seq);
    return index < 0 ? rows.length - 1 : index;
  });

  const wasLive = useRef(props.runLive ?? false);
  useEffect(() => {
    const live = props.runLive ?? false;
    if (live && !wasLive.current) jumpToEnd();
    wasLive.current = live;
  }, [props.runLive]);

  // A cited message: bring it to the middle of the view (or the nearest live one after it, when
  // it was rolled back). A tool result is brought into view on its call's card.
  useEffect(() => {
    if (highlighted === null) return;
    const index = citedRow(highlighted.seq);
    if (index >= 0) scrollToRow(index, "center");
  }, [highlighted]);

  useEffect(() => {
    if (props.startRequest) scrollToRow(0, "start");
  }, [props.startRequest]);

  useEffect(() => {
    if (props.endRequest) jumpToEnd();
  }, [props.endRequest]);

  const onScroll = () => {
    const el = scrollRef.current;
    if (!el) return;
    follow.onScroll();
    if (reading.current || rows.length === 0 || performance.now() < settleUntil.current) return;
    const below = el.scrollHeight - el.scrollTop - el.clientHeight;
    const side = el.scrollTop < READ_EARLIER_PX ? loadEarlier : props.hasLater && below < READ_LATER_PX ? props.loadLater : undefined;
    if (!side) return;
    reading.current = true;
    void side().finally(() => {
      reading.current = false;
    });
  };

  return (
    <SpotContext.Provider value={props.spot ?? null}>
    <div className="message-pane">
      <div className="message-scroll" ref={scrollRef} onScroll={onScroll} data-testid="message-scroll">
        {placeholder ?? (
          <ol
            ref={listRef}
            className="message-list"
            data-testid="message-list"
            data-count={rows.length}
            style={{ height: totalSize }}
          >
            {virtualizer.getVirtualItems().map((item) => {
              const row = rows[item.index];
              if (!row) return null;
              const place = { ref: virtualizer.measureElement, index: item.index, start: item.start };
              return row.kind === "marker" ? (
                <MarkerRow key={row.key} marker={row.marker} onUndo={onUndo} {...place} />
              ) : row.kind === "ended" ? (
                <EndedRow key={row.key} end={row.end} {...place} />
              ) : row.kind === "answered" ? (
                <AnsweredRow key={row.key} answer={row.answer} {...place} />
              ) : (
                <MessageItem
                  key={row.key}
                  message={row.message}
                  results={row.results}
                  plansBefore={row.plansBefore}
                  highlightedSeq={highlightedIn(row, highlighted?.seq)}
                  marks={highlightedIn(row, highlighted?.seq) === undefined ? undefined : highlighted?.words}
                  actions={
                    row.message.seq === props.rerunnable?.userSeq
                      ? EDIT
                      : row.message.seq === props.rerunnable?.answerSeq
                        ? REGENERATE
                        : undefined
                  }
                  onAction={props.onMessageAction}
                  onTogglePin={props.onTogglePin}
                  reviewRisk={props.reviewMarks?.get(row.message.seq)}
                  onOpenReview={props.onOpenReview}
                  onContinue={row.message.seq === props.continuable?.seq ? props.onContinue : undefined}
                  continueDisabled={row.message.seq === props.continuable?.seq && props.continuable.disabled}
                  briefFrom={row.message.seq === props.brief?.seq ? props.brief.from : undefined}
                  conversationId={conversationId}
                  onFigure={props.onFigure}
                  {...place}
                />
              );
            })}
          </ol>
        )}
        <div ref={footerRef}>{props.footer}</div>
      </div>
      {(follow.away || props.hasLater) && rows.length > 0 && (
        <JumpToLatest onJump={props.hasLater && props.onJumpToEnd ? props.onJumpToEnd : follow.jumpToEnd} />
      )}
    </div>
    </SpotContext.Provider>
  );
}

/** Offered while the reader is away from the end: back to the newest message, following again. */
function JumpToLatest({ onJump }: { onJump: () => void }) {
  const { t } = useTranslation();
  return (
    <button type="button" className="button button-small jump-to-latest" data-testid="jump-to-latest" onClick={onJump}>
      {t("message.jumpToLatest")}
    </button>
  );
}

/** Where the virtualizer puts a row: measured through `ref`, moved down to `start`. */
type Placement = { ref: (node: HTMLLIElement | null) => void; index: number; start: number };

/** A placed row's own attributes. */
function placed({ ref, index, start }: Placement) {
  return { ref, "data-index": index, style: { transform: `translateY(${start}px)` } };
}

/** Where the analyst stopped or aborted a run. */
const EndedRow = memo(function EndedRow(props: {
  end: RunEnd;
} & Placement) {
  const { t } = useTranslation();
  const { ending } = props.end;
  return (
    <li
      {...placed(props)}
      className="list-row run-ended-row"
      data-testid="run-ended"
      data-ended-by={ending.by}
      data-execution-id={props.end.executionId}
    >
      <div className="run-ended">
        {endedText(t, ending)}
      </div>
    </li>
  );
});

/** Where the analyst answered a failure: what failed, what was rolled back, what they chose. */
const AnsweredRow = memo(function AnsweredRow(props: {
  answer: Answered;
} & Placement) {
  const { t } = useTranslation();
  const r = props.answer.answered.report;
  const choice = r.resolution;
  return (
    <li
      {...placed(props)}
      className="list-row run-ended-row"
      data-testid="failure-answered"
      data-choice={choice ?? ""}
      data-execution-id={props.answer.executionId}
    >
      <div className="run-ended answered">
        <span>
          {t("recovery.row.failed", {
            what: failureClassLabel(t, r.class),
            where: r.todoTitle ?? t("recovery.row.noTodo"),
          })}
        </span>{" "}
        <span>
          {r.rolledBack
            ? t("recovery.row.rolledBack", { restored: r.filesRestored, removed: r.filesRemoved, messages: r.messagesRemoved })
            : t("recovery.row.nothingRolledBack")}
        </span>{" "}
        <strong data-resolved-by={r.resolvedBy ?? ""}>
          {choice &&
            (r.resolvedBy === "automatic"
              ? t("recovery.row.choseAutomatically")
              : t("recovery.row.chose", { choice: t(`recovery.choices.${choice}`) }))}
        </strong>
      </div>
    </li>
  );
});

/** Where a compaction's summary stands in the conversation, with undo while it is allowed. */
const MarkerRow = memo(function MarkerRow(props: {
  marker: CompactionMarker;
  onUndo: (compactionId: string) => void;
} & Placement) {
  const { t } = useTranslation();
  const { marker: m } = props;
  return (
    <li
      {...placed(props)}
      className="list-row compaction-row"
      data-testid="compaction-marker"
      data-compaction-id={m.id}
    >
      <div className="compaction-marker">
        <span>{t("compress.marker", {
            level: compressionLevelLabel(t, m.level),
            trigger: compactionTriggerLabel(t, m.trigger),
            start: m.startSeq ?? "?",
            end: m.endSeq ?? "?",
          })}</span>
        {m.undoable && (
          <button type="button" className="link-button" data-testid="compaction-undo" onClick={() => props.onUndo(m.id)}>
            {t("compress.undo")}
          </button>
        )}
      </div>
    </li>
  );
});
