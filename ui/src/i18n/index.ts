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

/** The saved choice, else the system language if it is Chinese, else English. */
export function initialLanguage(): Language {
  const stored = readStoredLanguage();
  if (stored) return stored;
  const system = typeof navigator !== "undefined" ? navigator.language : "";
  return system.toLowerCase().startsWith("zh") ? "zh" : "en";
}

export async function setLanguage(lang: Language): Promise<void> {
  try {
    window.localStorage.setItem(LANGUAGE_STORAGE_KEY, lang);
  } catch {
    // Storage can be unavailable; the switch still works for this session.
  }
  await i18n.changeLanguage(lang);
}

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
