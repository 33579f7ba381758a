import { lazy, Suspense, useState } from "react";
import { useTranslation } from "react-i18next";
import { formatNumber } from "../lib/format";
import { markPattern, splitMarks } from "../lib/marks";

const MarkdownText = lazy(() => import("./MarkdownText"));

/**
 * Content can be megabytes long. Laying out all of it at once stalls the
 * webview, so long texts show their head first with a "Show all" button.
 */
export const PREVIEW_CHARS = 200_000;

/** Longer texts stay plain: parsing and highlighting them would stall the list. */
export const MARKDOWN_CHARS = 60_000;

/** Whether a text shown as Markdown goes through the parser: not plain prose, not too long. */
export function parsesAsMarkdown(text: string): boolean {
  return text.length <= MARKDOWN_CHARS && !isPlainProse(text);
}

type Props = {
  text: string;
  testId: string;
  className?: string;
  markdown?: boolean;
  /** Words to mark where they stand (a search's), if any. */
  marks?: readonly string[];
};

/** `text` with `marks` wrapped in `<mark>`. */
function Marked({ text, marks }: { text: string; marks?: readonly string[] }) {
  if (!marks || marks.length === 0) return <>{text}</>;
  return (
    <>
      {splitMarks(text, markPattern(marks)).map((p, i) =>
        p.marked ? (
          <mark key={i} className="search-mark">
            {p.text}
          </mark>
        ) : (
          p.text
        ),
      )}
    </>
  );
}

export function MessageContent({ text, testId, className, markdown = false, marks }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [expanded, setExpanded] = useState(false);
  const truncated = !expanded && text.length > PREVIEW_CHARS;
  const shown = truncated ? text.slice(0, PREVIEW_CHARS) : text;

  const classes = className ? `message-content ${className}` : "message-content";
  if (markdown && isPlainProse(text)) {
    // Nothing markdown would change: the same paragraphs without the parser, which is most of
    // what a row costs when it scrolls into view.
    return (
      <div className={`${classes} markdown`} data-testid={testId}>
        {text.split(/\n[ \t]*\n/).map((paragraph, i) =>
          paragraph.trim() === "" ? null : (
            <p key={i}>
              <Marked text={paragraph.trim()} marks={marks} />
            </p>
          ),
        )}
      </div>
    );
  }
  if (markdown && text.length <= MARKDOWN_CHARS) {
    // Until the markdown chunk is loaded (once per session), the text shows as it is.
    return (
      <div className={`${classes} markdown`} data-testid={testId}>
        <Suspense fallback={<p className="markdown-pending">{text}</p>}>
          <MarkdownText text={text} marks={marks} />
        </Suspense>
      </div>
    );
  }
  return (
    <>
      <pre className={classes} data-testid={testId}>
        <Marked text={shown} marks={marks} />
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

/** Characters and line starts that make markdown differ from plain paragraphs (emphasis, code,
 *  headings, tables, links and autolinks, HTML and entities, escapes, lists, quotes, rules). */
const MARKUP = /[*_`#|[\]<>~&\\]|https?:|www\.|^\s*([-+]|\d+[.)])(\s|$)|^\s*(=+|-+)\s*$|^ {4}|^\t/m;

/** Whether markdown would render `text` as nothing but its paragraphs. */
export function isPlainProse(text: string): boolean {
  return text.length <= MARKDOWN_CHARS && !MARKUP.test(text);
}
