import { useCallback, useEffect, useEffectEvent, useMemo, useRef, useState } from "react";
import { NARROW } from "../hooks/useSidebar";
import { useTranslation } from "react-i18next";
import { checksFigures } from "../hooks/useFigures";
import { call } from "../api/call";
import {
  commands,
  type AppError,
  type CompactionMarker,
  type CompressionPreview,
  type ConversationSummary,
  type ExecutionView,
  type FigureView,
  type MessageView,
  type RiskLevel,
} from "../bindings";
import type { CompressionNotice } from "../hooks/useCompressionNotices";
import { useConversationBusy } from "../hooks/useConversationBusy";
import type { MessageWindow } from "../hooks/useMessages";
import type { ReportError } from "../hooks/useErrorBanner";
import { busyReason } from "../lib/busy";
import { formatCompact, formatNumber } from "../lib/format";
import { shortcutLabel } from "../lib/platform";
import type { RunState } from "../run/state";
import type { ApprovalAnswer, Choice } from "../run/useRuns";
import { Composer } from "./Composer";
import { CompressionDialog } from "./CompressionDialog";
import { CompressionNoticeBar } from "./CompressionNoticeBar";
import { ContextMeter } from "./ContextMeter";
import { EmptyState } from "./EmptyState";
import { ExportMenu } from "./ExportMenu";
import { InlineError } from "./InlineError";
import { FIND_INPUT, FindBar } from "./FindBar";
import { LiveRun } from "./LiveRun";
import type { Spot } from "../lib/figures";
import { MessageList, type Mark } from "./MessageList";
import type { MessageAction } from "./MessageItem";
import { RerunDialog } from "./RerunDialog";
import { RunHistory, type RunFiles } from "./RunHistory";
import { RunOptions } from "./RunOptions";
import { RecoveryPanel, type FigureChoice } from "./RecoveryPanel";
import { RelativeTime } from "./RelativeTime";
import { SubagentTree, type SubagentNode } from "./SubagentTree";
import { TenthManDialog } from "./TenthManDialog";
import { TodoPanel } from "./TodoPanel";
import { WorkspacePanel, type WorkspaceAdded } from "./WorkspacePanel";
import { WorkspacePreview } from "./WorkspacePreview";
import { ReceiptDialog } from "./ReceiptDialog";
import { useLatest } from "../hooks/useLatest";
import { useQuickChat } from "../hooks/useQuickChat";

type Props = {
  conversation: ConversationSummary;
  /** The conversation whose run spawned this one (a subagent's), when it is listed. */
  parent?: ConversationSummary | null;
  messages: MessageView[];
  loading: boolean;
  /** Reads and jumps through the conversation's pages. */
  pages: MessageWindow;
  /** Bumped by the find shortcut: the find bar opens (or takes focus). */
  findRequest: number;
  /** A message to open at (a search hit), with a nonce so the same seq can be asked twice. */
  revealRequest: Mark | null;
  run: RunState;
  executions: ExecutionView[];
  refreshKey: number;
  /** Bumped when the settings close: the provider, and so the window, may have changed. */
  settingsKey: number;
  report: ReportError;
  /** Starts a run; resolves to the error that refused it, if any. With `rewindFrom`, the last
   *  message sent and what followed are set aside first (edit and run again, regenerate). */
  onSend: (task: string, rewindFrom?: number | null) => Promise<AppError | null>;
  onStop: () => void;
  /** Skips the final review of the live run: its answer stands unreviewed and the run ends. */
  onSkipReview?: () => Promise<void>;
  /** Answers a failure; resolves to the error that refused the choice, if any. */
  onChoose: (executionId: string, choice: Choice, guidance: string | null, figures?: FigureChoice) => Promise<AppError | null>;
  /** Answers the MCP call the live run waits to have approved. */
  onApprove: (answer: ApprovalAnswer) => Promise<AppError | null>;
  onOpenConversation: (conversationId: string, title: string) => void;
  /** The notice of the newest compression made here or by a run, until dismissed or undone. */
  compressionNotice: CompressionNotice | null;
  onCompressed: (notice: CompressionNotice) => void;
  onDismissCompressionNotice: () => void;
  /** What is stored changed here (a compression, an undo): the list reads it again. */
  onMessagesChanged: () => void;
  /** Files the window just added to this conversation's workspace (a drop on it). */
  workspaceAdded: WorkspaceAdded | null;
};

/** How long a cited message stays highlighted. */
const HIGHLIGHT_MS = 4000;

/** The task Continue starts a run with, under an answer that was cut or stopped. */
export const CONTINUE_TASK = "Continue where you stopped.";

export function ConversationView(props: Props) {
  const { conversation, messages, loading, run, executions, refreshKey, report } = props;
  const { pages } = props;
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const { title, messageCount, tokens, updatedAt } = conversation;
  const [reviewOpen, setReviewOpen] = useState(false);
  // The run whose own review the panel shows (opened from the run history); else the newest.
  const [reviewRun, setReviewRun] = useState<string | null>(null);
  // The run whose files the workspace panel lists alone (opened from the run history).
  const [runFiles, setRunFiles] = useState<RunFiles | null>(null);
  useEffect(() => {
    setRunFiles(null);
    setReviewRun(null);
  }, [conversation.id]);
  const [compressOpen, setCompressOpen] = useState(false);
  // Bumped by a compression or an undo made here: the markers and the meter read again.
  const [compressions, setCompressions] = useState(0);
  const [markers, setMarkers] = useState<CompactionMarker[]>([]);
  const quickChat = useQuickChat(conversation.id, props.settingsKey);
  // Bumped when runs switched between the host and Docker: the workspace panel reads again.
  const [switches, setSwitches] = useState(0);
  const reportFailure = useEffectEvent((error: AppError) => report(error));
  useEffect(() => {
    let alive = true;
    void (async () => {
      const res = await call(() => commands.compactionList(conversation.id));
      if (!alive) return;
      if (res.status === "ok") setMarkers(res.data);
      else reportFailure(res.error);
    })();
    return () => {
      alive = false;
    };
  }, [conversation.id, refreshKey, compressions]);

  const { compressionNotice: notice, onDismissCompressionNotice, onMessagesChanged } = props;
  // A failed undo is said where the list is, over the marker the analyst clicked.
  const [undoError, setUndoError] = useState<AppError | null>(null);
  const undo = async (compactionId: string) => {
    const res = await call(() => commands.compressionUndo(compactionId));
    setUndoError(res.status === "error" ? res.error : null);
    if (res.status === "ok" && notice?.compactionId === compactionId) onDismissCompressionNotice();
    // The markers, the meter and the list read again, whatever happened.
    setCompressions((n) => n + 1);
    onMessagesChanged();
  };
  const compressed = (applied: CompressionPreview) => {
    setCompressOpen(false);
    setCompressions((n) => n + 1);
    onMessagesChanged();
    if (applied.compactionId !== null) {
      props.onCompressed({
        compactionId: applied.compactionId,
        trigger: "manual",
        tokensBefore: applied.tokensBefore,
        tokensAfter: applied.tokensAfter,
      });
    }
  };
  // Undo is offered while the compaction is the newest in force (or not yet listed).
  const noticeMarker = notice ? markers.find((m) => m.id === notice.compactionId) : undefined;
  const noticeUndoable = noticeMarker?.undoable ?? true;

  // Send is disabled, with the reason, while something else holds the conversation.
  const { busy, refresh: refreshBusy } = useConversationBusy(conversation.id, run.live);
  // A send that failed says why above the task field; the next one that works clears it.
  const [sendError, setSendError] = useState<AppError | null>(null);
  const send = async (task: string) => {
    const error = await props.onSend(task);
    setSendError(null);
    if (error === null) return true;
    // Refused as busy: the composer says by what, as it does for a busy conversation it knew of.
    if (error.code === "busy" && (await refreshBusy()) !== null) return false;
    setSendError(error);
    return false;
  };
  // Continue, under the newest answer when it was cut or stopped: a run here with the same
  // task every time, started as Send starts one, and offered when Send would be.
  const [continuing, setContinuing] = useState(false);
  const sendRef = useLatest(send);
  const continueAnswer = useCallback(async () => {
    setContinuing(true);
    await sendRef.current(CONTINUE_TASK);
    setContinuing(false);
  }, [sendRef]);
  const onContinue = useCallback(() => void continueAnswer(), [continueAnswer]);
  const continuable = useMemo(() => {
    if (pages.hasLater) return null;
    // The newest answer: the last message that is not a tool's result (a stopped answer's calls
    // are answered "not run" after it).
    const last = [...messages].reverse().find((m) => m.role !== "tool");
    const ended = last?.role === "assistant" ? last.answer?.ended : undefined;
    if (!last || (ended !== "cut" && ended !== "stopped")) return null;
    return { seq: last.seq, disabled: run.live || busy !== null || continuing };
  }, [messages, pages.hasLater, run.live, busy, continuing]);

  // A cited message, a search hit, a find match, "go to": its page is read (wherever it is)
  // and the message brought into view and marked for a while.
  const [highlighted, setHighlighted] = useState<Mark | null>(null);
  const reveal = async (seq: number) => {
    if (await pages.showAt(seq)) setHighlighted({ seq, nonce: Date.now() });
  };
  // A figure of an answer opened: the output that holds it is brought into view, the value's
  // span marked in it (a derived figure opens its first operand's).
  const [spot, setSpot] = useState<Spot | null>(null);
  // A figure whose source is a workspace file (one a command wrote, or an input the run
  // started with) opens that file's preview.
  const [figureFile, setFigureFile] = useState<string | null>(null);
  // A figure the tenth man recomputed and no output holds opens its receipt.
  const [receiptOf, setReceiptOf] = useState<FigureView | null>(null);
  const showAtRef = useLatest(pages.showAt);
  const onFigure = useCallback(
    (figure: FigureView) =>
      void (async () => {
        const source = figure.source ?? figure.operands[0] ?? null;
        if (source === null && figure.receipt !== null) {
          setReceiptOf(figure);
          return;
        }
        if (source?.path != null) {
          setFigureFile(source.path);
          return;
        }
        if (source === null || !(await showAtRef.current(source.messageSeq))) return;
        const nonce = Date.now();
        setHighlighted({ seq: source.messageSeq, nonce });
        setSpot(source.path === null ? { seq: source.messageSeq, start: source.start, end: source.end, nonce } : null);
      })(),
    [showAtRef],
  );
  useEffect(() => {
    if (highlighted === null) return;
    const timer = window.setTimeout(() => setHighlighted(null), HIGHLIGHT_MS);
    return () => window.clearTimeout(timer);
  }, [highlighted]);
  // A search hit: the messages hook reads its page; once it is shown, it is marked.
  const { revealRequest } = props;
  const revealed = useRef(0);
  useEffect(() => {
    if (!revealRequest || revealed.current === revealRequest.nonce) return;
    const first = messages[0];
    const last = messages[messages.length - 1];
    if (!first || !last || first.seq > revealRequest.seq || last.seq < revealRequest.seq) return;
    revealed.current = revealRequest.nonce;
    setHighlighted({ seq: revealRequest.seq, nonce: revealRequest.nonce, words: revealRequest.words });
  }, [revealRequest, messages]);

  // Edit the last message sent, or regenerate the answer to it: offered while nothing runs and
  // the list shows the conversation's end, where those messages are.
  const rerunnable = useMemo(() => {
    if (run.live || busy || pages.hasLater) return null;
    const user = [...messages].reverse().find((m) => m.role === "user");
    if (!user) return null;
    const answer = [...messages].reverse().find((m) => m.role === "assistant" && m.content.trim() !== "");
    return { userSeq: user.seq, answerSeq: answer && answer.seq > user.seq ? answer.seq : null };
  }, [messages, run.live, busy, pages.hasLater]);
  // The newest answer with figures, when the list shows the conversation's end: the review
  // panel offers its figures to mark for a recompute.
  const latestAnswer = useMemo(
    () => (pages.hasLater ? null : ([...messages].reverse().find(checksFigures) ?? null)),
    [messages, pages.hasLater],
  );
  const [rerun, setRerun] = useState<{ mode: MessageAction; text: string; seq: number } | null>(null);
  const rerunRef = useLatest(rerunnable);
  const messagesRef = useLatest(messages);
  const onMessageAction = useCallback((action: MessageAction) => {
    const point = rerunRef.current;
    if (!point) return;
    const user = messagesRef.current.find((m) => m.seq === point.userSeq);
    if (!user) return;
    setRerun({ mode: action, text: user.content, seq: user.seq });
  }, [messagesRef, rerunRef]);

  // A final review that found something (medium and up) leaves a mark on the answer it read:
  // the newest answer of its run, which ends where the next run starts.
  const reviewMarks = useMemo(() => {
    const roots = executions
      .filter((e) => e.depth === 0 && e.conversationId === conversation.id && e.firstSeq !== null)
      .sort((a, b) => (a.firstSeq ?? 0) - (b.firstSeq ?? 0));
    const marks = new Map<number, RiskLevel>();
    roots.forEach((run, i) => {
      if (!run.reviewRisk || run.reviewRisk === "none" || run.reviewRisk === "low") return;
      const from = run.firstSeq ?? 0;
      const to = roots[i + 1]?.firstSeq ?? Number.POSITIVE_INFINITY;
      const answer = [...messages].reverse().find((m) => m.role === "assistant" && m.content.trim() !== "" && m.seq >= from && m.seq < to);
      if (answer) marks.set(answer.seq, run.reviewRisk);
    });
    return marks;
  }, [executions, messages, conversation.id]);

  // Pinning changes what every request carries: the messages and the meter are read again.
  const onTogglePin = useCallback(
    async (message: MessageView) => {
      const res = await call(() => commands.messageSetPinned(conversation.id, message.seq, !message.pinned));
      if (res.status === "error") report(res.error);
      else onMessagesChanged();
    },
    [conversation.id, report, onMessagesChanged],
  );

  const [finding, setFinding] = useState(false);
  useEffect(() => {
    if (props.findRequest === 0) return;
    setFinding(true);
    window.setTimeout(() => document.getElementById(FIND_INPUT)?.focus(), 0);
  }, [props.findRequest]);
  // Jumps to either end; the list follows new messages again from the end.
  const [startRequest, setStartRequest] = useState(0);
  const [endRequest, setEndRequest] = useState(0);
  const toStart = async () => {
    if (await pages.showStart()) setStartRequest((n) => n + 1);
  };
  const toEnd = async () => {
    if (await pages.showEnd()) setEndRequest((n) => n + 1);
  };

  // The newest run the analyst started here that has a plan, and what the panels show of it:
  // a later run without todos leaves the last plan in sight.
  const root = executions.find((e) => e.parentId === null && e.todos.length > 0) ?? executions.find((e) => e.parentId === null) ?? null;
  const todos = run.todos ?? root?.todos ?? [];
  // The run the plan shown belongs to (the live one's plan may be newer than the list).
  const firstTodo = todos[0];
  const planOwner = firstTodo ? executions.find((e) => e.todos.some((x) => x.id === firstTodo.id)) : undefined;
  // Runs the analyst stopped or aborted in this conversation, each shown where it ended.
  const ends = useMemo(
    () =>
      executions.flatMap((e) =>
        e.conversationId === conversation.id && e.ending ? [{ executionId: e.id, ending: e.ending }] : [],
      ),
    [executions, conversation.id],
  );
  // Failures the analyst answered in this conversation, each kept as a row where they chose.
  const answers = useMemo(
    () =>
      executions.flatMap((e) =>
        e.conversationId === conversation.id ? e.answered.map((answered) => ({ executionId: e.id, answered })) : [],
      ),
    [executions, conversation.id],
  );
  const snapshots = [...new Set([...(root?.snapshotTodoIds ?? []), ...run.snapshotTodoIds])];
  // A subagent's own conversation lists the subagents it started, never itself.
  const stored: SubagentNode[] = executions
    .filter((e) => e.depth > 0 && e.conversationId !== conversation.id)
    .map((e) => ({
      executionId: e.id,
      parentId: e.parentId,
      conversationId: e.conversationId,
      depth: e.depth,
      task: e.task,
      // A live status is newer than the listed one.
      status: run.subagents.find((s) => s.executionId === e.id)?.status ?? e.status,
      deleted: e.conversationDeleted,
    }));
  const subagents: SubagentNode[] = [
    ...stored,
    ...run.subagents.filter((s) => s.conversationId !== conversation.id && !stored.some((e) => e.executionId === s.executionId)),
  ];
  const waiting = executions.find(
    (e) => e.status === "awaiting_user" && e.waitingOn !== null && e.waitingOn.resolution === null,
  );
  const failure = waiting?.waitingOn ?? null;
  // The failure a choice is being sent for stays on screen until the answer is known, so a
  // refused choice keeps the panel (and its error) rather than closing and reopening it.
  const [answering, setAnswering] = useState<string | null>(null);
  const [listedFiles, setListedFiles] = useState(0);
  // The call that wrote a workspace file: its result is brought into view and marked, wherever
  // it is in the history; one a subagent made opens the subagent's conversation.
  const showCall = async (callId: string, inConversation: string | null, messageSeq: number | null) => {
    if (inConversation !== null && inConversation !== conversation.id) {
      const child = subagents.find((s) => s.conversationId === inConversation);
      props.onOpenConversation(inConversation, child?.task ?? t("workspace.subagent"));
      return;
    }
    // By the answer that holds the call: its id alone repeats where a server numbers calls
    // per response.
    const res = await call(() => commands.toolResultSeq(conversation.id, callId, messageSeq));
    if (res.status === "ok" && res.data !== null) await reveal(res.data);
    else if (res.status === "ok") report({ code: "not_found", message: t("workspace.writerSetAside") });
    else report(res.error);
  };
  const showRecovery =
    failure !== null &&
    (answering === failure.id || (run.live ? run.awaiting?.failureId === failure.id : true));
  // Escape puts the panel aside; the failure stays unresolved and a bar brings it back.
  const [setAside, setSetAside] = useState<string | null>(null);
  // What the analyst typed for the agent while the failure waited: it goes with the choice.
  const [guidance, setGuidance] = useState("");
  const choose = async (choice: Choice, text: string, figures?: FigureChoice) => {
    if (!waiting || !failure) return null;
    setAnswering(failure.id);
    const refused = await props.onChoose(waiting.id, choice, text.trim() === "" ? null : text.trim(), figures);
    setAnswering(null);
    if (!refused) setGuidance("");
    return refused;
  };
  const guide = (text: string) => {
    setGuidance((before) => (before.trim() === "" ? text : `${before.trim()}\n${text}`));
    setSetAside(null);
  };

  return (
    <section
      className="conversation-view"
      data-testid="conversation-view"
      data-conversation-id={conversation.id}
      data-drop-workspace={conversation.id}
    >
      <header className="conversation-header">
        {props.parent && (
          <nav className="breadcrumb" aria-label={t("subagents.breadcrumb")} data-testid="breadcrumb">
            <button
              type="button"
              className="link-button"
              data-testid="breadcrumb-parent"
              onClick={() => props.parent && props.onOpenConversation(props.parent.id, props.parent.title)}
            >
              {props.parent.title}
            </button>
            <span aria-hidden="true"> › </span>
            <span>{t("subagents.childNote")}</span>
          </nav>
        )}
        <div className="conversation-heading-row">
          <h2 className="conversation-heading" data-testid="conversation-title" title={title}>
            {title}
          </h2>
          <div className="conversation-tools">
            <ContextMeter
              conversationId={conversation.id}
              liveUsage={run.live ? run.usage : null}
              refreshKey={`${refreshKey}:${compressions}:${props.settingsKey}`}
              onCompress={() => setCompressOpen(true)}
              quiet={finding}
            />
            <button
              type="button"
              className="button"
              data-testid="tenth-man-review-button"
              aria-haspopup="dialog"
              onClick={() => setReviewOpen(true)}
            >
              {t("review.label")}
            </button>
            <button
              type="button"
              className="button"
              data-testid="find-button"
              aria-expanded={finding}
              title={t("find.shortcut", { keys: shortcutLabel({ primary: true, key: "F" }) })}
              onClick={() => setFinding((f) => !f)}
            >
              {t("find.button")}
            </button>
            <RunHistory
              executions={executions.filter((e) => e.conversationId === conversation.id)}
              onOpen={(seq) => void reveal(seq)}
              onFiles={setRunFiles}
              onReview={(id) => {
                setReviewRun(id);
                setReviewOpen(true);
              }}
            />
            <ExportMenu conversationId={conversation.id} />
          </div>
        </div>
        <div className="conversation-header-meta">
          <span>{t("conversation.messages", { count: messageCount, formatted: formatNumber(messageCount, lang) })}</span>
          <span aria-hidden="true">·</span>
          {/* The same short form as the sidebar's, the exact count in the tooltip. */}
          <span data-testid="conversation-tokens" title={t("conversation.tokens", { count: tokens, formatted: formatNumber(tokens, lang) })}>
            {t("conversation.tokens", { count: tokens, formatted: formatCompact(tokens, lang) })}
          </span>
          <span aria-hidden="true">·</span>
          <RelativeTime iso={updatedAt} />
        </div>
      </header>
      {finding && (
        <FindBar
          conversationId={conversation.id}
          onReveal={(seq) => void reveal(seq)}
          onStart={() => void toStart()}
          onEnd={() => void toEnd()}
          onClose={() => setFinding(false)}
        />
      )}
      {/* Beside the review sheet, not under it: the message its evidence scrolls to stays in sight. */}
      <div className={reviewOpen ? "workbench beside-sheet" : "workbench"}>
        <div className="workbench-main">
          <MessageList
            key={conversation.id}
            conversationId={conversation.id}
            messages={messages}
            markers={markers}
            ends={ends}
            answers={answers}
            highlighted={highlighted}
            onUndo={(id) => void undo(id)}
            loadEarlier={pages.loadEarlier}
            hasLater={pages.hasLater}
            loadLater={pages.loadLater}
            onJumpToEnd={() => void toEnd()}
            startRequest={startRequest}
            endRequest={endRequest}
            placeholder={
              loading ? (
                <EmptyState testId="messages-loading">{t("main.loading")}</EmptyState>
              ) : messages.length === 0 && !run.live ? (
                <EmptyState testId="no-messages">{t("main.noMessages")}</EmptyState>
              ) : null
            }
            footer={
              <LiveRun
                run={run}
                conversationId={conversation.id}
                onOpenReview={() => setReviewOpen(true)}
                onApprove={props.onApprove}
                onSkipReview={props.onSkipReview}
              />
            }
            footerKey={`${run.text.length}:${run.reasoning.length}:${run.tools.length}:${run.tools.filter((x) => x.done).length}:${run.approval?.callId ?? ""}:${run.reviewing}`}
            runLive={run.live}
            rerunnable={rerunnable}
            brief={props.parent ? { seq: messages.find((m) => m.role === "user")?.seq ?? -1, from: props.parent.title } : null}
            onMessageAction={onMessageAction}
            onTogglePin={onTogglePin}
            reviewMarks={reviewMarks}
            onOpenReview={() => setReviewOpen(true)}
            continuable={continuable}
            onContinue={onContinue}
            onFigure={onFigure}
            spot={spot}
          />
          {undoError && (
            <div className="workbench-error">
              <InlineError error={undoError} testId="compaction-undo-error" />
            </div>
          )}
          {notice && (
            <CompressionNoticeBar
              notice={notice}
              undoable={noticeUndoable}
              onUndo={() => void undo(notice.compactionId)}
              onDismiss={onDismissCompressionNotice}
            />
          )}
          <Composer
            live={run.live}
            busyReason={busy ? busyReason(busy, t, lang) : null}
            error={sendError}
            onSend={send}
            onStop={props.onStop}
            onGuide={showRecovery && failure ? guide : null}
            quick={{ on: quickChat.quick, onChange: (on) => void quickChat.setQuick(on) }}
          />
          <InlineError error={quickChat.error} testId="quick-chat-error" />
          <RunOptions conversationId={conversation.id} disabled={run.live} settingsKey={props.settingsKey} onSwitched={() => setSwitches((n) => n + 1)} />
        </div>
        {/* With no plan, no subagents and no files, a narrow window gives the messages the room. */}
        <aside className={todos.length === 0 && subagents.length === 0 && listedFiles === 0 ? "workbench-side quiet" : "workbench-side"}>
          {todos.length > 0 && (
            <TodoPanel
              todos={todos}
              snapshotTodoIds={snapshots}
              ending={planOwner?.ending ?? null}
              owner={planOwner ? { executionId: planOwner.id, task: planOwner.task, status: planOwner.status } : null}
              onChanged={onMessagesChanged}
            />
          )}
          {subagents.length > 0 && <SubagentTree nodes={subagents} onOpen={props.onOpenConversation} />}
          <WorkspacePanel
            conversationId={conversation.id}
            refreshKey={`${refreshKey}:${run.live}:${run.tools.filter((x) => x.done).length}:${switches}`}
            added={props.workspaceAdded?.conversationId === conversation.id ? props.workspaceAdded : null}
            onListed={setListedFiles}
            onShowCall={(callId, inConversation, messageSeq) => void showCall(callId, inConversation, messageSeq)}
            onOpenConversation={props.onOpenConversation}
            onlyRun={runFiles}
            onShowAll={() => setRunFiles(null)}
          />
        </aside>
      </div>
      {showRecovery && failure && setAside !== failure.id && (
        <RecoveryPanel
          key={failure.id}
          report={failure}
          guidance={guidance}
          onGuidanceChange={setGuidance}
          onChoose={choose}
          onDismiss={() => setSetAside(failure.id)}
        />
      )}
      {showRecovery && failure && setAside === failure.id && (
        <div className="recovery-aside" role="status" data-testid="recovery-aside">
          <span>{t("recovery.aside")}</span>
          <button type="button" className="button button-small button-primary" data-testid="recovery-reopen" onClick={() => setSetAside(null)}>
            {t("recovery.reopen")}
          </button>
        </div>
      )}
      {rerun && (
        <RerunDialog
          mode={rerun.mode}
          text={rerun.text}
          setAside={messages.filter((m) => m.seq >= rerun.seq).length}
          onRun={async (text) => {
            const failed = await props.onSend(text, rerun.seq);
            if (failed === null) onMessagesChanged();
            return failed;
          }}
          onClose={() => setRerun(null)}
        />
      )}
      {compressOpen && (
        <CompressionDialog
          conversationId={conversation.id}
          onClose={() => setCompressOpen(false)}
          onDone={compressed}
        />
      )}
      {receiptOf?.receipt && <ReceiptDialog figure={receiptOf} receipt={receiptOf.receipt} onClose={() => setReceiptOf(null)} />}
      {figureFile !== null && (
        <WorkspacePreview
          conversationId={conversation.id}
          file={{ path: figureFile, size: null, modifiedMs: null, writtenBy: null }}
          onClose={() => setFigureFile(null)}
        />
      )}
      {reviewOpen && (
        <TenthManDialog
          conversationId={conversation.id}
          executionId={reviewRun}
          answer={latestAnswer}
          onClose={() => {
            setReviewOpen(false);
            setReviewRun(null);
          }}
          onEvidence={(seq) => {
            void reveal(seq);
            // On a narrow window the sheet takes the width: it closes to show the message, and
            // opens again on the same stored review.
            if (typeof window.matchMedia === "function" && window.matchMedia(NARROW).matches) setReviewOpen(false);
          }}
        />
      )}
    </section>
  );
}
