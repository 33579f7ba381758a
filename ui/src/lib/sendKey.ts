import { primaryPressed, type Chord } from "./platform";

/**
 * Which key sends the composer's task: Enter (Shift+Enter adds a line), as in the chat apps
 * analysts use, or Ctrl+Enter (Enter adds a line), for those who write long tasks. Saved in
 * localStorage with the theme and the language. "ctrl-enter" is the platform's modifier with
 * Enter, ⌘↩ on macOS; the saved name stays, so a choice made before keeps holding.
 */
export type SendKey = "enter" | "ctrl-enter";
export const SEND_KEYS: SendKey[] = ["enter", "ctrl-enter"];
export const SEND_KEY_STORAGE_KEY = "decima.sendKey";
const CHANGED = "decima:send-key";

/** The keys that send, for the words that name them. */
export const SEND_CHORDS: Record<SendKey, Chord> = {
  enter: { key: "Enter" },
  "ctrl-enter": { primary: true, key: "Enter" },
};

/** The keys that add a line where Enter sends. */
export const NEW_LINE_CHORD: Chord = { shift: true, key: "Enter" };

export function savedSendKey(): SendKey {
  try {
    return window.localStorage.getItem(SEND_KEY_STORAGE_KEY) === "ctrl-enter" ? "ctrl-enter" : "enter";
  } catch {
    return "enter";
  }
}

/** Saves the choice and tells every composer. */
export function saveSendKey(key: SendKey): void {
  try {
    window.localStorage.setItem(SEND_KEY_STORAGE_KEY, key);
  } catch {
    // Storage can be unavailable; the choice still holds for this session.
  }
  window.dispatchEvent(new CustomEvent(CHANGED, { detail: key }));
}

/** Follows the choice as it changes. */
export function onSendKeyChange(listener: (key: SendKey) => void): () => void {
  const handler = (event: Event) => listener((event as CustomEvent<SendKey>).detail);
  window.addEventListener(CHANGED, handler);
  return () => window.removeEventListener(CHANGED, handler);
}

/**
 * Whether this key press sends. An Enter that confirms an input method's composition (typing
 * Chinese) never does.
 */
export function sends(
  event: { key: string; shiftKey: boolean; ctrlKey: boolean; metaKey: boolean; nativeEvent: { isComposing?: boolean; keyCode?: number } },
  key: SendKey,
): boolean {
  if (event.key !== "Enter" || event.nativeEvent.isComposing || event.nativeEvent.keyCode === 229) return false;
  if (key === "ctrl-enter") return primaryPressed(event);
  return !event.shiftKey;
}
