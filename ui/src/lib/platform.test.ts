// The platform's keyboard conventions: which modifier a shortcut takes and how it is written,
// on macOS and elsewhere.
import { afterEach, describe, expect, it, vi } from "vitest";
import { isMac, primaryPressed, shortcutLabel, type Chord } from "./platform";

afterEach(() => {
  delete window.__decimaPlatform;
  vi.restoreAllMocks();
});

const press = (mods: { ctrlKey?: boolean; metaKey?: boolean }) => ({ ctrlKey: false, metaKey: false, ...mods });

describe("the platform", () => {
  it("is what the app told the page, whatever the webview says", () => {
    vi.spyOn(navigator, "platform", "get").mockReturnValue("MacIntel");
    window.__decimaPlatform = "linux";
    expect(isMac()).toBe(false);
    window.__decimaPlatform = "windows";
    expect(isMac()).toBe(false);
    window.__decimaPlatform = "macos";
    expect(isMac()).toBe(true);
  });

  it("is the webview's where the app told nothing (a plain browser)", () => {
    vi.spyOn(navigator, "platform", "get").mockReturnValue("MacIntel");
    expect(isMac()).toBe(true);
    vi.spyOn(navigator, "platform", "get").mockReturnValue("Win32");
    expect(isMac()).toBe(false);
    vi.spyOn(navigator, "platform", "get").mockReturnValue("Linux x86_64");
    expect(isMac()).toBe(false);
  });
});

describe("the shortcut modifier", () => {
  it("is ⌘ alone on macOS: Ctrl is the text fields' there, and ⌃⌘ is the system's", () => {
    window.__decimaPlatform = "macos";
    expect(primaryPressed(press({ metaKey: true }))).toBe(true);
    expect(primaryPressed(press({ ctrlKey: true }))).toBe(false);
    expect(primaryPressed(press({ ctrlKey: true, metaKey: true }))).toBe(false);
    expect(primaryPressed(press({}))).toBe(false);
  });

  it("is Ctrl alone on Linux and Windows, where the Windows key is the system's", () => {
    for (const platform of ["linux", "windows"]) {
      window.__decimaPlatform = platform;
      expect(primaryPressed(press({ ctrlKey: true }))).toBe(true);
      expect(primaryPressed(press({ metaKey: true }))).toBe(false);
      expect(primaryPressed(press({ ctrlKey: true, metaKey: true }))).toBe(false);
      expect(primaryPressed(press({}))).toBe(false);
    }
  });
});

describe("a shortcut's words", () => {
  const chords: Chord[] = [
    { primary: true, key: "K" },
    { primary: true, key: "Enter" },
    { shift: true, key: "Escape" },
    { shift: true, key: "Enter" },
    { key: "Enter" },
    { primary: true, shift: true, alt: true, key: "K" },
    { primary: true, key: "," },
  ];

  it("are macOS's symbols on a Mac, in Apple's order", () => {
    window.__decimaPlatform = "macos";
    expect(chords.map(shortcutLabel)).toEqual(["⌘K", "⌘↩", "⇧Esc", "⇧↩", "↩", "⌥⇧⌘K", "⌘,"]);
  });

  it("are the keys' names joined by + elsewhere", () => {
    for (const platform of ["linux", "windows"]) {
      window.__decimaPlatform = platform;
      expect(chords.map(shortcutLabel)).toEqual(["Ctrl+K", "Ctrl+Enter", "Shift+Esc", "Shift+Enter", "Enter", "Ctrl+Alt+Shift+K", "Ctrl+,"]);
    }
  });
});
