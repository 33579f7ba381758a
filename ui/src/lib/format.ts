/** Small, pure formatting helpers (easy to unit-test, no React). */

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

export function parseTime(iso: string): Date | null {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : new Date(ms);
}

/**
 * "3 min ago", "yesterday", … for the last week; a short date after that.
 * Returns `null` for "just now" so the caller can use its own translation.
 */
export function formatRelative(iso: string, lang: string, now: Date = new Date()): string | null {
  const date = parseTime(iso);
  if (!date) return iso;
  const seconds = Math.round((date.getTime() - now.getTime()) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return null;
  const rtf = new Intl.RelativeTimeFormat(lang, { numeric: "auto", style: "short" });
  if (abs < HOUR) return rtf.format(Math.round(seconds / MINUTE), "minute");
  if (abs < DAY) return rtf.format(Math.round(seconds / HOUR), "hour");
  if (abs < WEEK) return rtf.format(Math.round(seconds / DAY), "day");
  return formatShortDate(date, lang, now);
}

export function formatShortDate(date: Date, lang: string, now: Date = new Date()): string {
  const sameYear = date.getFullYear() === now.getFullYear();
  return date.toLocaleDateString(lang, {
    year: sameYear ? undefined : "numeric",
    month: "short",
    day: "numeric",
  });
}

/** Time of day for today's messages, date and time otherwise. */
export function formatMessageTime(iso: string, lang: string, now: Date = new Date()): string {
  const date = parseTime(iso);
  if (!date) return iso;
  const time = date.toLocaleTimeString(lang, { hour: "2-digit", minute: "2-digit" });
  if (date.toDateString() === now.toDateString()) return time;
  return `${formatShortDate(date, lang, now)} ${time}`;
}

/** Full local date and time, for tooltips. */
export function formatFullTime(iso: string, lang: string): string {
  const date = parseTime(iso);
  if (!date) return iso;
  return date.toLocaleString(lang, { dateStyle: "medium", timeStyle: "medium" });
}

export function formatNumber(n: number, lang: string): string {
  return new Intl.NumberFormat(lang).format(n);
}

/**
 * An estimated cost in US dollars, with the precision it needs: cents from a dollar up, and two
 * significant digits below a cent, so a run that cost a fraction of a cent never reads "$0.00".
 * Below a hundredth of a cent it says "< $0.0001"; nothing at all is "$0".
 */
export function formatCost(usd: number, lang: string): string {
  const currency = (options: Intl.NumberFormatOptions) =>
    new Intl.NumberFormat(lang, { style: "currency", currency: "USD", ...options });
  if (usd <= 0) return currency({ maximumFractionDigits: 0 }).format(0);
  if (usd < 0.0001) return `< ${currency({ maximumFractionDigits: 4 }).format(0.0001)}`;
  if (usd < 0.01) return currency({ maximumSignificantDigits: 2 }).format(usd);
  return currency({ maximumFractionDigits: usd >= 1 ? 2 : 3 }).format(usd);
}

/** 1234 → "1.2K" (en) / "1234" (zh); for dense lists. */
export function formatCompact(n: number, lang: string): string {
  return new Intl.NumberFormat(lang, { notation: "compact", maximumFractionDigits: 1 }).format(n);
}

/**
 * Pretty-prints JSON text with two-space indentation.
 * Returns `ok: false` with the raw text when it is not valid JSON.
 */
export function prettyJson(raw: string): { ok: boolean; text: string } {
  try {
    return { ok: true, text: JSON.stringify(JSON.parse(raw), null, 2) };
  } catch {
    return { ok: false, text: raw };
  }
}

/** A file size as a person reads it: "12.5 KB", "1.4 GB" (1024-based, as file managers do). */
export function formatBytes(bytes: number, lang: string): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 ? 0 : 1;
  return `${new Intl.NumberFormat(lang, { maximumFractionDigits: digits }).format(value)} ${units[unit]}`;
}
