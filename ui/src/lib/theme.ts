/** The window's theme: light, dark, or whatever the system prefers. Saved in localStorage. */
export type Theme = "light" | "dark" | "system";
export const THEMES: Theme[] = ["light", "dark", "system"];
export const THEME_STORAGE_KEY = "decima.theme";

export function savedTheme(): Theme {
  const saved = window.localStorage.getItem(THEME_STORAGE_KEY);
  return saved === "light" || saved === "dark" ? saved : "system";
}

/** Applies a theme to the document (`data-theme` drives the CSS variables) and saves it. */
export function applyTheme(theme: Theme): void {
  const dark =
    theme === "dark" ||
    (theme === "system" && typeof window.matchMedia === "function" && window.matchMedia("(prefers-color-scheme: dark)").matches);
  document.documentElement.dataset.theme = dark ? "dark" : "light";
  window.localStorage.setItem(THEME_STORAGE_KEY, theme);
}
