import { lazy, Suspense, useEffect, useMemo, useRef, useState, type KeyboardEvent, type MouseEvent } from "react";
import { useTranslation } from "react-i18next";
import type { FigureView } from "../bindings";
import { byteToIndex, figureRanges, figureTitle, opensSource, splitFigures } from "../lib/figures";
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
  /** The answer's figures, each a link to its source or marked unsupported. */
  figures?: readonly FigureView[];
  /** Opens a figure's source. */
  onFigure?: (figure: FigureView) => void;
  /** A span to highlight and scroll to, in UTF-8 bytes: a figure's source in this output. */
  span?: { start: number; end: number; nonce: number };
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

/** `text[from, to)` with each figure a span the click handler finds, titled with its source. */
function Figured({ text, from, to, ranges, figures, titles }: { text: string; from: number; to: number; ranges: ReturnType<typeof figureRanges>; figures: readonly FigureView[]; titles: readonly string[] }) {
  return (
    <>
      {splitFigures(text, ranges, from, to).map((p, i) =>
        p.figure === undefined ? (
          p.text
        ) : (
          <span
            key={i}
            className={`figure figure-${figures[p.figure]!.status}`}
            data-figure={p.figure}
            data-testid="figure"
            title={titles[p.figure]}
            {...(opensSource(figures[p.figure]!) ? { role: "link", tabIndex: 0 } : {})}
          >
            {p.text}
          </span>
        ),
      )}
    </>
  );
}

/** The paragraphs of a plain text with where each starts. */
function paragraphs(text: string): { from: number; to: number }[] {
  const out: { from: number; to: number }[] = [];
  const breaks = /\n[ \t]*\n/g;
  let at = 0;
  for (const m of text.matchAll(breaks)) {
    out.push({ from: at, to: m.index ?? 0 });
    at = (m.index ?? 0) + m[0].length;
  }
  out.push({ from: at, to: text.length });
  return out
    .map(({ from, to }) => {
      const slice = text.slice(from, to);
      const lead = slice.length - slice.trimStart().length;
      return { from: from + lead, to: from + slice.trimEnd().length };
    })
    .filter((p) => p.to > p.from);
}

/** A tool output with one span highlighted and brought into view: a figure's source. */
function Spotted({ text, span }: { text: string; span: { start: number; end: number; nonce: number } }) {
  const mark = useRef<HTMLElement>(null);
  const start = byteToIndex(text, span.start);
  const end = byteToIndex(text, span.end);
  useEffect(() => {
    const frame = requestAnimationFrame(() => mark.current?.scrollIntoView?.({ block: "center" }));
    return () => cancelAnimationFrame(frame);
  }, [span.nonce]);
  return (
    <>
      {text.slice(0, start)}
      <mark ref={mark} className="figure-source" data-testid="figure-source">
        {text.slice(start, end)}
      </mark>
      {text.slice(end)}
    </>
  );
}

export function MessageContent({ text, testId, className, markdown = false, marks, figures, onFigure, span }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [expanded, setExpanded] = useState(false);
  // A span past the preview shows the whole output: the source must be in view.
  const truncated = !expanded && text.length > PREVIEW_CHARS && !(span && byteToIndex(text, span.end) > PREVIEW_CHARS);
  const shown = truncated ? text.slice(0, PREVIEW_CHARS) : text;
  const titles = useMemo(() => (figures ?? []).map((f) => figureTitle(t, f)), [figures, t]);
  const ranges = useMemo(() => (figures && figures.length > 0 ? figureRanges(text, figures) : []), [text, figures]);
  // One handler for every figure of the message, by its `data-figure`: a click, or Enter on a
  // figure reached with Tab.
  const open = (target: EventTarget) => {
    const at = (target as HTMLElement).closest("[data-figure]");
    const figure = at && figures ? figures[Number(at.getAttribute("data-figure"))] : undefined;
    if (figure && onFigure) onFigure(figure);
  };
  const live = figures && figures.length > 0 && onFigure;
  const onClick = live ? (e: MouseEvent<HTMLElement>) => open(e.target) : undefined;
  const onKeyDown = live
    ? (e: KeyboardEvent<HTMLElement>) => {
        if (e.key === "Enter") open(e.target);
      }
    : undefined;

  const classes = className ? `message-content ${className}` : "message-content";
  if (markdown && isPlainProse(text)) {
    // Nothing markdown would change: the same paragraphs without the parser, which is most of
    // what a row costs when it scrolls into view.
    return (
      <div className={`${classes} markdown`} data-testid={testId} onClick={onClick} onKeyDown={onKeyDown}>
        {paragraphs(text).map(({ from, to }, i) => (
          <p key={i}>
            {ranges.length > 0 ? (
              <Figured text={text} from={from} to={to} ranges={ranges} figures={figures ?? []} titles={titles} />
            ) : (
              <Marked text={text.slice(from, to)} marks={marks} />
            )}
          </p>
        ))}
      </div>
    );
  }
  if (markdown && text.length <= MARKDOWN_CHARS) {
    // Until the markdown chunk is loaded (once per session), the text shows as it is.
    return (
      <div className={`${classes} markdown`} data-testid={testId} onClick={onClick} onKeyDown={onKeyDown}>
        <Suspense fallback={<p className="markdown-pending">{text}</p>}>
          <MarkdownText text={text} marks={marks} figures={figures} titles={titles} />
        </Suspense>
      </div>
    );
  }
  return (
    <>
      <pre className={classes} data-testid={testId}>
        {span ? <Spotted text={shown} span={span} /> : <Marked text={shown} marks={marks} />}
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
