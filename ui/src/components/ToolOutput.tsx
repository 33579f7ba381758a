import { useTranslation } from "react-i18next";
import { formatNumber } from "../lib/format";
import { isShortResult } from "../lib/toolLine";
import { headLines, lineCount } from "../lib/toolResult";
import { MessageContent } from "./MessageContent";

/** Lines of a long output shown while it is folded. */
const HEAD_LINES = 3;

/**
 * What a tool returned, as a reader audits it: a short output in full; a long one folded with
 * its first lines and its size in view, the whole of it one click away.
 */
export function ToolOutput({ content, marks, span }: { content: string; marks?: readonly string[]; span?: { start: number; end: number; nonce: number } }) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  if (isShortResult(content)) {
    return <MessageContent text={content} className="tool-output-short" testId="message-content" marks={marks} span={span} />;
  }
  // A figure's source opens the fold it is in.
  return (
    <details className="tool-output" data-testid="tool-output" open={span !== undefined ? true : undefined}>
      <summary>
        <span className="tool-output-head" data-testid="tool-output-head">
          {headLines(content, HEAD_LINES)}
        </span>{" "}
        <span className="muted tool-output-size">
          {t("message.outputSize", { count: lineCount(content), chars: formatNumber(content.length, lang) })}
        </span>
      </summary>
      <MessageContent text={content} testId="message-content" marks={marks} span={span} />
    </details>
  );
}
