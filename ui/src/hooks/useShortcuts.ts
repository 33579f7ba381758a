import { useEffect, useRef } from "react";

/** What the window's keyboard shortcuts do. */
export type ShortcutActions = {
  newConversation: () => void;
  focusComposer: () => void;
  stopRun: () => void;
  findInConversation: () => void;
  searchAll: () => void;
  showShortcuts: () => void;
};

/** The shortcuts, for the list the window shows (keys as the analyst presses them). */
export const SHORTCUTS: { keys: string; action: keyof ShortcutActions }[] = [
  { keys: "Ctrl+N", action: "newConversation" },
  { keys: "Shift+Esc", action: "focusComposer" },
  { keys: "Ctrl+.", action: "stopRun" },
  { keys: "Ctrl+F", action: "findInConversation" },
  { keys: "Ctrl+K", action: "searchAll" },
  { keys: "Ctrl+/", action: "showShortcuts" },
];

/** Which shortcut, if any, this key press is. */
export function shortcutOf(event: KeyboardEvent): keyof ShortcutActions | null {
  const ctrl = event.ctrlKey || event.metaKey;
  if (ctrl && !event.shiftKey && !event.altKey && event.key.toLowerCase() === "n") return "newConversation";
  if (event.shiftKey && !ctrl && event.key === "Escape") return "focusComposer";
  if (ctrl && event.key === ".") return "stopRun";
  if (ctrl && !event.shiftKey && !event.altKey && event.key.toLowerCase() === "f") return "findInConversation";
  if (ctrl && !event.shiftKey && !event.altKey && event.key.toLowerCase() === "k") return "searchAll";
  if (ctrl && event.key === "/") return "showShortcuts";
  return null;
}

/** Answers the window's keyboard shortcuts anywhere in the window. */
export function useShortcuts(actions: ShortcutActions): void {
  const current = useRef(actions);
  useEffect(() => {
    current.current = actions;
  });
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const shortcut = shortcutOf(event);
      if (!shortcut) return;
      event.preventDefault();
      current.current[shortcut]();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
}
