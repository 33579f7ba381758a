/**
 * The platform's keyboard conventions, in one place: which modifier a shortcut takes (⌘ on
 * macOS, Ctrl elsewhere) and how a shortcut is written for the analyst ("⌘K" beside "Ctrl+K").
 * Every shortcut the window answers, and every one it shows, goes through here, so a Mac never
 * answers Ctrl+F (there it moves the caret) nor tells its user to press Ctrl.
 */

declare global {
  interface Window {
    /** The operating system as the app knows it (Rust's `std::env::consts::OS`: "macos",
     *  "windows", "linux"), told to the page before its scripts run. */
    __decimaPlatform?: string;
  }
}

/** What the browser says of its platform, where the app told nothing (a plain browser). */
type NavigatorPlatform = { platform?: string; userAgentData?: { platform?: string } };

/**
 * Whether the window runs on macOS: the app's word first, then the webview's. WebKit on macOS
 * says "MacIntel" in `navigator.platform`, Apple silicon included.
 */
export function isMac(): boolean {
  const told = typeof window === "undefined" ? undefined : window.__decimaPlatform;
  if (typeof told === "string" && told !== "") return told === "macos";
  if (typeof navigator === "undefined") return false;
  const nav = navigator as Navigator & NavigatorPlatform;
  const platform = nav.userAgentData?.platform || nav.platform || "";
  return /^mac/i.test(platform);
}

/** The modifier keys a key press holds. */
type Modifiers = { ctrlKey: boolean; metaKey: boolean };

/**
 * Whether the platform's shortcut modifier is held, and only it of the two: ⌘ on macOS (where
 * Ctrl+F and Ctrl+K are the text fields' own caret keys, and ⌃⌘F is full screen), Ctrl
 * elsewhere (where the Windows key belongs to the system).
 */
export function primaryPressed(event: Modifiers): boolean {
  return isMac() ? event.metaKey && !event.ctrlKey : event.ctrlKey && !event.metaKey;
}

/** A shortcut as the analyst presses it: the platform's modifier or none, Shift, Alt, a key. */
export type Chord = {
  /** The platform's shortcut modifier: ⌘ on macOS, Ctrl elsewhere. */
  primary?: boolean;
  shift?: boolean;
  alt?: boolean;
  /** The key as `KeyboardEvent.key` names it ("Enter", "Escape") or as its cap prints it ("K", "/"). */
  key: string;
};

/** How macOS writes the keys whose names it does not spell out. */
const MAC_KEYS: Record<string, string> = { Enter: "↩", Escape: "Esc" };
/** How the other platforms write them. */
const OTHER_KEYS: Record<string, string> = { Escape: "Esc" };

/**
 * A shortcut as the platform writes it: macOS's symbols in Apple's order, run together (⌥⇧⌘K,
 * ⌘↩, ⇧Esc), or the words joined by "+" elsewhere (Ctrl+Alt+Shift+K, Ctrl+Enter, Shift+Esc).
 */
export function shortcutLabel(chord: Chord): string {
  if (isMac()) {
    const key = MAC_KEYS[chord.key] ?? chord.key;
    return `${chord.alt ? "⌥" : ""}${chord.shift ? "⇧" : ""}${chord.primary ? "⌘" : ""}${key}`;
  }
  const key = OTHER_KEYS[chord.key] ?? chord.key;
  return [chord.primary ? "Ctrl" : null, chord.alt ? "Alt" : null, chord.shift ? "Shift" : null, key].filter((part) => part !== null).join("+");
}
