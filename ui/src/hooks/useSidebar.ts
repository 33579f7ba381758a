import { useEffect, useState, useSyncExternalStore } from "react";

/** Below this width the sidebar folds away and opens over the conversation instead. */
export const NARROW = "(max-width: 999px)";

function matches(): boolean {
  return typeof window.matchMedia === "function" && window.matchMedia(NARROW).matches;
}

/** Whether the sidebar shows, and whether the window is narrow (it then lies over the view). */
export type SidebarView = { shown: boolean; narrow: boolean };

/**
 * Whether the conversations sidebar shows, kept outside React's state of the app: toggling it
 * re-renders the header's button and the body's frame only, never the open conversation (at
 * 900 px a whole-app render took four frames to open the sidebar). On a wide window it shows
 * until the analyst hides it; on a narrow one it is folded until asked for, then lies over the
 * conversation and folds again when a conversation is opened or on Escape. Crossing the width
 * resets it.
 */
export type SidebarStore = {
  subscribe: (listener: () => void) => () => void;
  view: () => SidebarView;
  toggle: () => void;
  show: () => void;
  fold: () => void;
  /** The window crossed the width. */
  setNarrow: (narrow: boolean) => void;
};

/** A sidebar store for one window. */
export function createSidebarStore(narrow = matches()): SidebarStore {
  let choice: "auto" | "shown" | "hidden" = "auto";
  let view: SidebarView = { shown: !narrow, narrow };
  const listeners = new Set<() => void>();
  const set = (next: typeof choice, nextNarrow = view.narrow) => {
    choice = next;
    const shown = nextNarrow ? choice === "shown" : choice !== "hidden";
    if (shown === view.shown && nextNarrow === view.narrow) return;
    view = { shown, narrow: nextNarrow };
    listeners.forEach((l) => l());
  };
  return {
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    view: () => view,
    toggle: () => set(view.shown ? "hidden" : "shown"),
    show: () => set("shown"),
    fold: () => {
      if (view.narrow) set("auto");
    },
    setNarrow: (narrow) => set("auto", narrow),
  };
}

/** The window's sidebar store, made once, following the window's width and Escape. */
export function useSidebarStore(): SidebarStore {
  const [store] = useState(createSidebarStore);
  useEffect(() => {
    if (typeof window.matchMedia !== "function") return;
    const query = window.matchMedia(NARROW);
    const onChange = () => store.setNarrow(query.matches);
    query.addEventListener("change", onChange);
    return () => query.removeEventListener("change", onChange);
  }, [store]);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const { narrow, shown } = store.view();
      if (narrow && shown && event.key === "Escape" && !event.defaultPrevented) store.fold();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [store]);
  return store;
}

/** The sidebar as it is now; re-renders the caller when it changes. */
export function useSidebarView(store: SidebarStore): SidebarView {
  return useSyncExternalStore(store.subscribe, store.view);
}
