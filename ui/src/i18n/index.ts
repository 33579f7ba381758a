import i18n from "i18next";
import { initReactI18next } from "react-i18next";
import en from "./en";
import zh from "./zh";

export const LANGUAGES = ["en", "zh"] as const;
export type Language = (typeof LANGUAGES)[number];

export const LANGUAGE_STORAGE_KEY = "decima.language";

export const resources = {
  en: { translation: en },
  zh: { translation: zh },
} as const;

export function isLanguage(value: unknown): value is Language {
  return typeof value === "string" && (LANGUAGES as readonly string[]).includes(value);
}

function readStoredLanguage(): Language | null {
  try {
    const stored = window.localStorage.getItem(LANGUAGE_STORAGE_KEY);
    return isLanguage(stored) ? stored : null;
  } catch {
    return null;
  }
}

/** What the webview says of the system's languages. */
type SystemLanguages = { language?: string; languages?: readonly string[] };

declare global {
  interface Window {
    /** The system's languages as the app read them before the page loaded (LANGUAGE, LC_ALL,
     *  LC_MESSAGES and LANG on Linux; the user's preferences on Windows and macOS). WebKitGTK's
     *  own `navigator.language` says en-US wherever the locale is not installed. */
    __decimaSystemLanguages?: readonly string[];
  }
}

/** The system's languages: the app's reading first, then the webview's. */
function systemLanguages(): SystemLanguages | undefined {
  if (typeof window !== "undefined" && Array.isArray(window.__decimaSystemLanguages) && window.__decimaSystemLanguages.length > 0) {
    return { languages: window.__decimaSystemLanguages };
  }
  return typeof navigator === "undefined" ? undefined : navigator;
}

/**
 * The system's language, for an analyst who never chose one: the first the app read from the
 * system, else the first the webview lists (`navigator.languages`, then `navigator.language`),
 * Chinese for any zh* (zh-CN, zh-TW, zh),
 * English for everything else, since those are the two the window speaks.
 */
export function systemLanguage(system: SystemLanguages | undefined = systemLanguages()): Language {
  const first = system?.languages?.[0] ?? system?.language ?? "";
  return first.toLowerCase().startsWith("zh") ? "zh" : "en";
}

/**
 * The analyst's saved choice, else the system's language. The system's is not saved: until the
 * analyst chooses, the window follows the system wherever it starts.
 */
export function initialLanguage(): Language {
  return readStoredLanguage() ?? systemLanguage();
}

/** The analyst's choice: saved, so it wins over the system's language at every later start. */
export async function setLanguage(lang: Language): Promise<void> {
  try {
    window.localStorage.setItem(LANGUAGE_STORAGE_KEY, lang);
  } catch {
    // Storage can be unavailable; the switch still works for this session.
  }
  await i18n.changeLanguage(lang);
}

/** The language the window speaks now (English when i18next resolved something else). */
export function currentLanguage(): Language {
  return isLanguage(i18n.resolvedLanguage) ? i18n.resolvedLanguage : "en";
}

i18n.on("languageChanged", (lng) => {
  if (typeof document !== "undefined") {
    document.documentElement.lang = lng === "zh" ? "zh-CN" : "en";
  }
});

void i18n.use(initReactI18next).init({
  resources,
  lng: initialLanguage(),
  fallbackLng: "en",
  supportedLngs: LANGUAGES,
  interpolation: { escapeValue: false }, // React escapes already
  returnNull: false,
  initAsync: false,
});

/**
 * `{{count, n}}`: a number as the language writes it ("1,665" beside "3,000", never "1665"),
 * anything else as it came. The locale files mark every placeholder that can hold a count,
 * including the ones callers fill with text they formatted themselves.
 */
i18n.services.formatter?.add("n", (value: unknown, lng: string | undefined) =>
  typeof value === "number" ? new Intl.NumberFormat(lng === "zh" ? "zh-CN" : "en-US").format(value) : value === undefined || value === null ? "" : String(value),
);

export default i18n;
