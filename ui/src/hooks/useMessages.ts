import { useCallback, useEffect, useRef, useState } from "react";
import { call } from "../api/call";
import { commands, type MessagePage, type MessageView, type PageAt } from "../bindings";
import type { ReportError } from "./useErrorBanner";
import { useLatest } from "./useLatest";

/** Messages fetched at a time: a few screens. A conversation opens with its newest page. */
export const PAGE = 200;
/** The most one refresh re-reads; other pages are read again when scrolled to. */
const MAX_REFRESH = 1000;

/** What the view shows of a conversation (`id`): one run of consecutive live messages. */
type Shown = { id: string | null; messages: MessageView[]; hasEarlier: boolean; hasLater: boolean };
const NOTHING: Shown = { id: null, messages: [], hasEarlier: false, hasLater: false };

/**
 * The open conversation's messages: one contiguous stretch of them, read a page at a time. It
 * opens at the end; scrolling reads the page above or below; a jump (a search hit, a citation,
 * the first message) replaces the stretch with the page around its target, so going to seq 1
 * of 100k messages reads one page, not every page in between. While the stretch reaches the
 * end (`hasLater` false) the view follows new messages.
 *
 * `refreshKey` re-reads what is shown (a run stored messages, or rolled some back).
 */
export function useMessages(
  conversationId: string | null,
  report: ReportError,
  refreshKey: unknown = 0,
  /** A message to open at (a search hit): the conversation's first read is the page around it. */
  reveal: { conversationId: string; seq: number; nonce: number } | null = null,
) {
  const [stored, setShown] = useState<Shown>(NOTHING);
  // The conversation whose first read has ended (shown, or failed and reported).
  const [settled, setSettled] = useState<string | null>(null);
  // Another conversation's messages are never shown, not even for the render in which the
  // switch happens: what belongs to the one opened is derived here, so a switch is one render,
  // not a render of the old messages in the new view and then a second one to clear them.
  const shown = stored.id === conversationId ? stored : NOTHING;
  const loading = conversationId !== null && settled !== conversationId;
  const reportRef = useLatest(report);
  const shownRef = useLatest<Shown>(shown);
  const openRef = useRef<string | null>(null);
  // Every read that replaces the stretch takes a number; a slower, older read is dropped.
  const generation = useRef(0);
  const busyRef = useRef(false);

  const read = useCallback(async (id: string, at: PageAt, limit: number): Promise<MessagePage | null> => {
    const res = await call(() => commands.messagePage(id, at, limit));
    if (openRef.current !== id) return null; // another conversation was opened meanwhile
    if (res.status === "error") {
      reportRef.current(res.error);
      return null;
    }
    return res.data;
  }, [reportRef]);

  /** Replaces the stretch with the page at `at`; true once it is shown. */
  const replace = useCallback(
    async (at: PageAt, limit = PAGE) => {
      const id = openRef.current;
      if (id === null) return false;
      const mine = ++generation.current;
      const page = await read(id, at, limit);
      if (mine !== generation.current) return false; // a newer read replaced this one
      setSettled(id);
      if (page === null) return false;
      setShown({ id, messages: page.messages, hasEarlier: page.hasEarlier, hasLater: page.hasLater });
      return true;
    },
    [read],
  );

  useEffect(() => {
    // A refresh of the same conversation keeps what is shown until the new page arrives.
    const same = openRef.current === conversationId;
    openRef.current = conversationId;
    if (!same) {
      generation.current++;
      shownRef.current = NOTHING;
    }
    if (conversationId === null) return;
    const now = shownRef.current;
    const limit = Math.min(Math.max(PAGE, now.messages.length), MAX_REFRESH);
    const first = now.messages[0];
    // Away from the end, the same stretch is read again; at the end, the newest messages.
    const at: PageAt = now.hasLater && first ? { kind: "after", seq: first.seq - 1 } : { kind: "end" };
    void replace(at, limit);
  }, [conversationId, refreshKey, replace, shownRef]);

  /** Reads the page on one side of the stretch; true when it added any. */
  const extend = useCallback(
    async (earlier: boolean) => {
      const id = openRef.current;
      const now = shownRef.current;
      const edge = earlier ? now.messages[0] : now.messages[now.messages.length - 1];
      if (id === null || !edge || busyRef.current || !(earlier ? now.hasEarlier : now.hasLater)) return false;
      busyRef.current = true;
      const mine = generation.current;
      const at: PageAt = earlier ? { kind: "before", seq: edge.seq } : { kind: "after", seq: edge.seq };
      const page = await read(id, at, PAGE).finally(() => {
        busyRef.current = false;
      });
      if (page === null || mine !== generation.current) return false;
      setShown((s) => {
        if (s.id !== id) return s;
        if (earlier) {
          const top = s.messages[0]?.seq ?? Infinity;
          return { ...s, messages: [...page.messages.filter((m) => m.seq < top), ...s.messages], hasEarlier: page.hasEarlier };
        }
        const bottom = s.messages[s.messages.length - 1]?.seq ?? -Infinity;
        return { ...s, messages: [...s.messages, ...page.messages.filter((m) => m.seq > bottom)], hasLater: page.hasLater };
      });
      return page.messages.length > 0;
    },
    [read, shownRef],
  );

  const loadEarlier = useCallback(() => extend(true), [extend]);
  const loadLater = useCallback(() => extend(false), [extend]);

  /** Brings `seq` into the stretch (reading the page around it unless it is there already). */
  const showAt = useCallback(
    async (seq: number) => {
      const list = shownRef.current.messages;
      const first = list[0];
      const last = list[list.length - 1];
      if (first && last && first.seq <= seq && seq <= last.seq) return true;
      return replace({ kind: "around", seq });
    },
    [replace, shownRef],
  );

  /** The conversation's first messages. */
  const showStart = useCallback(async () => {
    if (shownRef.current.messages.length > 0 && !shownRef.current.hasEarlier) return true;
    return replace({ kind: "after", seq: 0 });
  }, [replace, shownRef]);

  /** Its newest messages (read again only when the stretch does not reach them). */
  const showEnd = useCallback(async () => {
    if (!shownRef.current.hasLater) return true;
    return replace({ kind: "end" });
  }, [replace, shownRef]);

  // Declared after the effect above, so it runs after it: the page around the hit replaces
  // the newest page that opening the conversation asked for.
  useEffect(() => {
    if (reveal && reveal.conversationId === openRef.current) void showAt(reveal.seq);
  }, [reveal, showAt]);

  return {
    messages: shown.messages,
    loading,
    hasEarlier: shown.hasEarlier,
    hasLater: shown.hasLater,
    loadEarlier,
    loadLater,
    showAt,
    showStart,
    showEnd,
  };
}

/** What the conversation view needs of [`useMessages`]. */
export type MessageWindow = Omit<ReturnType<typeof useMessages>, "messages" | "loading">;
