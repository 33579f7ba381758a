import { useEffect, useRef } from "react";
import { primaryPressed, type Chord } from "../lib/platform";

/** What the window's keyboard shortcuts do. */
export type ShortcutActions = {
  newConversation: () => void;
  focusComposer: () => void;
  stopRun: () => void;
  findInConversation: () => void;
  searchAll: () => void;
  showShortcuts: () => void;
  openSettings: () => void;
};

/**
 * The shortcuts, for the list the window shows (keys as the analyst presses them, written by
 * `shortcutLabel`: "Ctrl+N", or "⌘N" on macOS). On macOS ⌘, is also the app menu's Settings….
 */
export const SHORTCUTS: { keys: Chord; action: keyof ShortcutActions }[] = [
  { keys: { primary: true, key: "N" }, action: "newConversation" },
  { keys: { shift: true, key: "Escape" }, action: "focusComposer" },
  { keys: { primary: true, key: "." }, action: "stopRun" },
  { keys: { primary: true, key: "F" }, action: "findInConversation" },
  { keys: { primary: true, key: "K" }, action: "searchAll" },
  { keys: { primary: true, key: "," }, action: "openSettings" },
  { keys: { primary: true, key: "/" }, action: "showShortcuts" },
];

/**
 * Which shortcut, if any, this key press is. The modifier is the platform's (⌘ on macOS, Ctrl
 * elsewhere); Shift is not looked at for ".", "/" and ",", which some layouts type with it.
 */
export function shortcutOf(event: KeyboardEvent): keyof ShortcutActions | null {
  const ctrl = primaryPressed(event);
  if (ctrl && !event.shiftKey && !event.altKey && event.key.toLowerCase() === "n") return "newConversation";
  if (event.shiftKey && !event.ctrlKey && !event.metaKey && event.key === "Escape") return "focusComposer";
  if (ctrl && event.key === ".") return "stopRun";
  if (ctrl && !event.shiftKey && !event.altKey && event.key.toLowerCase() === "f") return "findInConversation";
  if (ctrl && !event.shiftKey && !event.altKey && event.key.toLowerCase() === "k") return "searchAll";
  if (ctrl && event.key === "/") return "showShortcuts";
  if (ctrl && !event.altKey && event.key === ",") return "openSettings";
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
