import { useLayoutEffect, useRef, useState } from "react";

/**
 * `value`, passed on at most once every `ms`: a change after a quiet spell at once, changes in
 * a burst at the end of the wait, the newest one. What `passNow(next, shown)` lets through
 * passes at once whatever the wait (a cleared text, a new one). For what is costly to render
 * anew on each change, such as Markdown of a text that streams in: a fast stream is drawn ten
 * times a second rather than on every delta, a slow one delta by delta.
 */
export function useThrottled<T>(value: T, ms: number, passNow: (next: T, shown: T) => boolean): T {
  const [shown, setShown] = useState(value);
  const shownAt = useRef(0);
  const now = !Object.is(value, shown) && passNow(value, shown);
  // Before paint: a change let through after a quiet spell is drawn in the frame it came in.
  useLayoutEffect(() => {
    if (Object.is(value, shown)) return;
    const wait = now ? 0 : shownAt.current + ms - performance.now();
    const show = () => {
      shownAt.current = performance.now();
      setShown(value);
    };
    if (wait <= 0) {
      show();
      return;
    }
    const timer = window.setTimeout(show, wait);
    return () => window.clearTimeout(timer);
  }, [value, shown, ms, now]);
  return now ? value : shown;
}
