import { useEffect, useState } from "react";

/** Below this width the sidebar folds away and opens over the conversation instead. */
export const NARROW = "(max-width: 999px)";

function matches(): boolean {
  return typeof window.matchMedia === "function" && window.matchMedia(NARROW).matches;
}

/**
 * Whether the conversations sidebar shows. On a wide window it shows until the analyst hides
 * it; on a narrow one it is folded until asked for, then lies over the conversation and folds
 * again when a conversation is opened or on Escape. Crossing the width resets it.
 */
export function useSidebar(): { shown: boolean; narrow: boolean; toggle: () => void; fold: () => void; show: () => void } {
  const [narrow, setNarrow] = useState(matches);
  const [choice, setChoice] = useState<"auto" | "shown" | "hidden">("auto");
  useEffect(() => {
    if (typeof window.matchMedia !== "function") return;
    const query = window.matchMedia(NARROW);
    const onChange = () => {
      setNarrow(query.matches);
      setChoice("auto");
    };
    query.addEventListener("change", onChange);
    return () => query.removeEventListener("change", onChange);
  }, []);
  const shown = narrow ? choice === "shown" : choice !== "hidden";
  useEffect(() => {
    if (!(narrow && shown)) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape" && !event.defaultPrevented) setChoice("auto");
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [narrow, shown]);
  return {
    shown,
    narrow,
    toggle: () => setChoice(shown ? "hidden" : "shown"),
    show: () => setChoice("shown"),
    fold: () => {
      if (narrow) setChoice("auto");
    },
  };
}
