import { useCallback, useEffect, useLayoutEffect, useRef, useState, type RefObject } from "react";
import { useLatest } from "./useLatest";

/** Within this many pixels of the end, the reader is following the conversation. */
export const AT_END_PX = 48;

/**
 * A scroll this long after the reader's wheel, touch, scrolling key or press on the scrollbar is
 * theirs (smooth scrolling goes on for a while after the input).
 */
export const INTENT_MS = 1500;

/** Keys that scroll the page or move the focus through it. */
const MOVING_KEYS = new Set(["ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End", " ", "Tab"]);

/** A key that moves the view: typing in a field (Enter in the composer) does not. */
function movesTheView(event: KeyboardEvent): boolean {
  if (!MOVING_KEYS.has(event.key)) return false;
  const target = event.target as HTMLElement | null;
  const typing = target?.isContentEditable || target?.tagName === "INPUT" || target?.tagName === "TEXTAREA";
  return event.key === "Tab" || !typing;
}


type Options = {
  /** The scrolling viewport. */
  scrollRef: RefObject<HTMLElement | null>;
  /** The virtualized list inside it, sized by the virtualizer. */
  listRef: RefObject<HTMLElement | null>;
  /** What follows the list inside the viewport (the live run). */
  footerRef: RefObject<HTMLElement | null>;
  /** The list's height as the virtualizer knows it now, which can be newer than the rendered one. */
  currentListHeight: () => number;
  /** A new conversation opens at its end. */
  conversationId: string;
  /** Changes whenever the content may have changed size: rows, their measured sizes, the footer. */
  contentKey: unknown;
  /** Whether the list is shown (not a placeholder), so there is a list to observe. */
  listShown: boolean;
  /** The loaded messages stop short of the newest: their end is not the conversation's. */
  detached?: boolean;
};

/**
 * Keeps the viewport at the end while the reader is there, whatever changes below or above
 * (new rows, rows measured, rows rolled back or summarised, the live run growing or ending),
 * and leaves it alone once the reader has scrolled away, until they come back or jump.
 *
 * Whether the reader is at the end is decided from the distance to the end at each scroll
 * event, taken as the smaller of what the DOM says and what the virtualizer knows: the
 * virtualizer moves the view itself when rows it measured differ from its estimate, before
 * the list's new height is rendered, and measured against that stale height the view looked
 * scrolled away, which used to stop the following for good.
 *
 * A scroll away from the end leaves it when the reader made it (a wheel, touch, scrolling key or
 * a press on the scrollbar just before) or when nothing was moving (the browser bringing an element into
 * view for assistive technology or automation). One that came while the content's height was
 * changing, with no input behind it (the virtualizer correcting its estimates, rows laid out
 * late on a busy machine), is the layout's: it is undone while following.
 */
export function useFollowEnd(options: Options) {
  const { scrollRef, listRef, footerRef, conversationId, contentKey, listShown } = options;
  const detached = useLatest(options.detached ?? false);
  const following = useRef(true);
  // Shown: the reader is away from the end, so "Jump to latest" is offered.
  const [away, setAway] = useState(false);
  const currentHeight = useLatest(options.currentListHeight);

  const setFollowing = useCallback((value: boolean) => {
    following.current = value;
    setAway(!value);
  }, []);

  // The viewport's scroll height when it was last seen: a scroll with another height came
  // while the layout was moving.
  const seenHeight = useRef(0);

  const stickToEnd = useCallback(() => {
    const el = scrollRef.current;
    if (el) seenHeight.current = el.scrollHeight;
    if (!el || !following.current || detached.current) return;
    const end = Math.max(0, el.scrollHeight - el.clientHeight);
    if (Math.abs(el.scrollTop - end) >= 1) el.scrollTo({ top: end });
  }, [detached, scrollRef]);

  // When the reader last touched the viewport's scrolling.
  const intentAt = useRef(Number.NEGATIVE_INFINITY);
  useEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    const mark = () => {
      intentAt.current = performance.now();
    };
    const onKey = (event: KeyboardEvent) => {
      if (movesTheView(event)) mark();
    };
    // A press on the viewport itself is on its scrollbar; one on a button in a row is a click,
    // not a scroll.
    const onPointer = (event: PointerEvent) => {
      if (event.target === el) mark();
    };
    const passive = { passive: true } as const;
    const types = ["wheel", "touchstart", "touchmove"] as const;
    for (const type of types) el.addEventListener(type, mark, passive);
    el.addEventListener("pointerdown", onPointer, passive);
    window.addEventListener("keydown", onKey, passive);
    return () => {
      for (const type of types) el.removeEventListener(type, mark);
      el.removeEventListener("pointerdown", onPointer);
      window.removeEventListener("keydown", onKey);
    };
  }, [scrollRef, listShown]);

  /** Called on every scroll of the viewport. */
  const onScroll = useCallback(() => {
    const el = scrollRef.current;
    if (!el) return;
    const dom = el.scrollHeight - el.scrollTop - el.clientHeight;
    const list = listRef.current;
    const rendered = list ? parseFloat(list.style.height) || 0 : 0;
    const known = dom + (currentHeight.current() - rendered);
    const atEnd = Math.min(dom, known) < AT_END_PX;
    const layoutMoving = el.scrollHeight !== seenHeight.current || Math.abs(currentHeight.current() - rendered) >= 1;
    seenHeight.current = el.scrollHeight;
    if (atEnd === following.current) return;
    if (atEnd) setFollowing(true);
    else if (performance.now() - intentAt.current <= INTENT_MS || !layoutMoving) setFollowing(false);
    else stickToEnd();
  }, [scrollRef, listRef, currentHeight, setFollowing, stickToEnd]);

  // A conversation opens at its end; then every change of the content keeps the end in view
  // while the reader follows.
  const opened = useRef<string | null>(null);
  useLayoutEffect(() => {
    if (opened.current !== conversationId) {
      opened.current = conversationId;
      setFollowing(true);
    }
    stickToEnd();
  }, [conversationId, contentKey, stickToEnd, setFollowing]);

  // Sizes that change without a render of the list (a row's markdown laid out, a warning in
  // the live run) are seen by observing the list and the footer.
  useEffect(() => {
    if (typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => stickToEnd());
    for (const el of [scrollRef.current, listRef.current, footerRef.current]) if (el) observer.observe(el);
    return () => observer.disconnect();
  }, [scrollRef, listRef, footerRef, stickToEnd, listShown]);

  /** Back to the end, following again. */
  const jumpToEnd = useCallback(() => {
    setFollowing(true);
    stickToEnd();
  }, [setFollowing, stickToEnd]);

  /** Stops following: something else was brought into view. */
  const release = useCallback(() => setFollowing(false), [setFollowing]);

  return { away, onScroll, jumpToEnd, release };
}
