// The language at the first start: the system's (as the app read it, else navigator.language /
// navigator.languages) until the analyst chooses one; the choice is saved and wins after.
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LanguageSwitch } from "../components/LanguageSwitch";
import i18n, { LANGUAGE_STORAGE_KEY, initialLanguage, systemLanguage } from "../i18n";

/** The webview reports `languages` (its first is `language` unless given). */
function systemSays(...languages: string[]) {
  vi.spyOn(navigator, "language", "get").mockReturnValue(languages[0] ?? "");
  vi.spyOn(navigator, "languages", "get").mockReturnValue(languages);
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.resetModules();
});

describe("the system's language", () => {
  it("is Chinese for any zh* and English for everything else", () => {
    for (const zh of ["zh-CN", "zh-TW", "zh", "zh-Hans-CN", "ZH-cn"]) expect(systemLanguage({ language: zh, languages: [zh] })).toBe("zh");
    for (const other of ["en-US", "en", "fr-FR", "de", "ja-JP", "C", ""]) expect(systemLanguage({ language: other, languages: [other] })).toBe("en");
  });

  it("takes the first of the system's languages, or navigator.language where it lists none", () => {
    expect(systemLanguage({ language: "en-US", languages: ["zh-CN", "en-US"] })).toBe("zh");
    expect(systemLanguage({ language: "zh-CN", languages: ["en-GB", "zh-CN"] })).toBe("en");
    expect(systemLanguage({ language: "zh-CN", languages: [] })).toBe("zh");
    expect(systemLanguage({ language: "zh-CN" })).toBe("zh");
    expect(systemLanguage(undefined)).toBe("en");
  });

  it("takes the languages the app read from the system over the webview's", () => {
    systemSays("en-US");
    window.__decimaSystemLanguages = ["zh-CN", "en-US"];
    try {
      expect(systemLanguage()).toBe("zh");
      window.__decimaSystemLanguages = [];
      expect(systemLanguage()).toBe("en");
    } finally {
      delete window.__decimaSystemLanguages;
    }
  });

  it("reads the webview's navigator when nothing else is given", () => {
    systemSays("zh-CN");
    expect(systemLanguage()).toBe("zh");
    systemSays("en-US");
    expect(systemLanguage()).toBe("en");
  });
});

describe("the language at start", () => {
  it("follows the system while the analyst never chose, without saving it", () => {
    window.localStorage.removeItem(LANGUAGE_STORAGE_KEY);
    systemSays("zh-CN", "en-US");
    expect(initialLanguage()).toBe("zh");
    systemSays("fr-FR");
    expect(initialLanguage()).toBe("en");
    expect(window.localStorage.getItem(LANGUAGE_STORAGE_KEY)).toBeNull();
  });

  it("keeps the analyst's choice over the system's, in both directions", () => {
    systemSays("zh-CN");
    window.localStorage.setItem(LANGUAGE_STORAGE_KEY, "en");
    expect(initialLanguage()).toBe("en");
    systemSays("en-US");
    window.localStorage.setItem(LANGUAGE_STORAGE_KEY, "zh");
    expect(initialLanguage()).toBe("zh");
    // A value this build does not know is no choice.
    systemSays("zh-TW");
    window.localStorage.setItem(LANGUAGE_STORAGE_KEY, "fr");
    expect(initialLanguage()).toBe("zh");
  });

  it("starts the window in the system's language on a LANG=zh_CN.UTF-8 system", async () => {
    window.localStorage.removeItem(LANGUAGE_STORAGE_KEY);
    systemSays("zh-CN");
    // A fresh load of the module, as the window's first start does.
    vi.resetModules();
    const fresh = await import("../i18n");
    expect(fresh.currentLanguage()).toBe("zh");
    expect(fresh.default.t("language.label")).toBe("语言");
    expect(document.documentElement.lang).toBe("zh-CN");
  });

  it("saves a choice made in the switch, which then wins at the next start", async () => {
    systemSays("zh-CN");
    await i18n.changeLanguage(initialLanguage());
    const user = userEvent.setup();
    render(<LanguageSwitch />);
    const sw = screen.getByTestId("language-switch");
    expect(within(sw).getByRole("button", { name: "中文" })).toHaveAttribute("aria-pressed", "true");
    await user.click(within(sw).getByRole("button", { name: "EN" }));
    expect(window.localStorage.getItem(LANGUAGE_STORAGE_KEY)).toBe("en");
    expect(initialLanguage()).toBe("en");
    vi.resetModules();
    const next = await import("../i18n");
    expect(next.currentLanguage()).toBe("en");
  });
});
