import { useState } from "react";
import { useTranslation } from "react-i18next";
import { formatNumber } from "../lib/format";

/**
 * Content can be megabytes long. Laying out all of it at once stalls the
 * webview, so long texts show their head first with a "Show all" button.
 */
export const PREVIEW_CHARS = 200_000;

type Props = { text: string; testId: string; className?: string };

export function MessageContent({ text, testId, className }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [expanded, setExpanded] = useState(false);
  const truncated = !expanded && text.length > PREVIEW_CHARS;
  const shown = truncated ? text.slice(0, PREVIEW_CHARS) : text;

  return (
    <>
      <pre className={className ? `message-content ${className}` : "message-content"} data-testid={testId}>
        {shown}
      </pre>
      {truncated && (
        <div className="truncation-note" data-testid="truncation-note">
          <span>
            {t("message.truncated", {
              shown: formatNumber(PREVIEW_CHARS, lang),
              total: formatNumber(text.length, lang),
            })}
          </span>
          <button type="button" className="link-button" data-testid="show-all" onClick={() => setExpanded(true)}>
            {t("message.showAll")}
          </button>
        </div>
      )}
    </>
  );
}
