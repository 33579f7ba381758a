import { useEffect, useLayoutEffect, useState } from "react";

/**
 * `value`, passed on at most once every `ms`: a change after a quiet spell at once, in the very
 * render it comes in (a slow stream's delta costs no extra render, and no extra frame), changes
 * in a burst at the end of the wait, the newest one. What `passNow(next, shown)` lets through
 * passes at once whatever the wait (a cleared text, a new one). For what is costly to render
 * anew on each change, such as Markdown of a text that streams in: a fast stream is drawn at
 * most every `ms`, a slow one delta by delta.
 */
export function useThrottled<T>(value: T, ms: number, passNow: (next: T, shown: T) => boolean): T {
  const [shown, setShown] = useState(value);
  // Whether `ms` passed since the value on screen was passed on.
  const [quiet, setQuiet] = useState(true);
  const passes = !Object.is(value, shown) && (quiet || passNow(value, shown));
  useLayoutEffect(() => {
    if (!passes) return;
    setShown(value);
    setQuiet(false);
  }, [passes, value]);
  useEffect(() => {
    if (quiet) return;
    const timer = window.setTimeout(() => setQuiet(true), ms);
    return () => window.clearTimeout(timer);
  }, [quiet, shown, ms]);
  return passes ? value : shown;
}
