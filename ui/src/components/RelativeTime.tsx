import { useTranslation } from "react-i18next";
import { formatFullTime, formatRelative } from "../lib/format";

/** "5 min ago" with the full local time as tooltip and machine-readable dateTime. */
export function RelativeTime({ iso }: { iso: string }) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  return (
    <time dateTime={iso} title={formatFullTime(iso, lang)}>
      {formatRelative(iso, lang) ?? t("time.justNow")}
    </time>
  );
}
