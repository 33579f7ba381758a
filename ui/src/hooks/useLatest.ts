import { useLayoutEffect, useRef, type RefObject } from "react";

/**
 * A ref that holds the value of the last render, for callbacks and effects that must call the
 * newest handler or read the newest state without re-subscribing. It is written after the
 * render commits (a layout effect, so before any other effect reads it), never during render,
 * which React's compiler forbids: a render it throws away must not leak into the ref.
 */
export function useLatest<T>(value: T): RefObject<T> {
  const ref = useRef(value);
  useLayoutEffect(() => {
    ref.current = value;
  });
  return ref;
}
