import type { ReactElement, ReactNode } from "react";
import Markdown from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";
import { useTranslation } from "react-i18next";
import type { FigureView } from "../bindings";
import { rehypeFigures } from "../lib/figures";
import { rehypeMarks } from "../lib/marks";
import { toCsv, toTsv } from "../lib/table";
import { CopyButton } from "./CopyButton";
import { SaveCsvButton } from "./SaveCsvButton";

/** The parts of a syntax-tree node that hold text. */
type TextNode = { type: string; value?: string; children?: TextNode[] };

/** The text of a syntax-tree node, as the code block holds it. */
function textOf(node: TextNode | undefined): string {
  if (!node) return "";
  if (node.type === "text") return node.value ?? "";
  return (node.children ?? []).map(textOf).join("");
}

/** A Markdown table's cells, row by row (header first). */
function tableCells(node: TextNode | undefined): { head: string[]; body: string[][] } {
  const rows: string[][] = [];
  const walk = (n: TextNode | undefined) => {
    if (!n) return;
    const tag = (n as TextNode & { tagName?: string }).tagName;
    if (tag === "tr") {
      rows.push((n.children ?? []).filter((c) => ["th", "td"].includes((c as TextNode & { tagName?: string }).tagName ?? "")).map(textOf));
      return;
    }
    (n.children ?? []).forEach(walk);
  };
  walk(node);
  const [head = [], ...body] = rows;
  return { head, body };
}

/** What react-markdown hands a component: the syntax-tree node and the rendered children. */
type BlockProps = { node?: unknown; children?: ReactNode };

/** A table with Copy as TSV and Save as CSV above its right edge. */
function TableBlock({ node, children }: BlockProps) {
  const { t } = useTranslation();
  return (
    <div className="table-block">
      <span className="table-block-tools">
        <CopyButton
          text={() => {
            const { head, body } = tableCells(node as TextNode | undefined);
            return toTsv(head, body);
          }}
          testId="copy-table"
          label={t("table.copyTsv")}
        />
        <SaveCsvButton
          csv={() => {
            const { head, body } = tableCells(node as TextNode | undefined);
            return toCsv(head, body);
          }}
          name="table"
        />
      </span>
      <table>{children}</table>
    </div>
  );
}

/** A code block with its own Copy button. */
function CodeBlock({ node, children }: BlockProps) {
  return (
    <div className="code-block">
      <CopyButton text={() => textOf(node as TextNode | undefined).replace(/\n$/, "")} testId="copy-code" />
      <pre>{children}</pre>
    </div>
  );
}

/** Defined once: components made anew on each render would be new types to React, which would
 *  remount them and lose their state (a table's "Saved to …"). */
const COMPONENTS = { table: TableBlock, pre: CodeBlock };

/** How many rendered texts the cache keeps, and how many characters of text in all: a row that
 *  scrolls back into view, or a conversation opened again, is not parsed a second time. */
const CACHE_ENTRIES = 600;
const CACHE_CHARS = 3_000_000;

/** Rendered texts by their text (and marks), oldest first: a `Map` keeps insertion order. */
const rendered = new Map<string, ReactElement>();
let cachedChars = 0;

function cacheKey(text: string, marks?: readonly string[], titles?: readonly string[]): string {
  const figured = titles && titles.length > 0 ? `${titles.join("\u0000")}\u0002${text}` : text;
  return marks && marks.length > 0 ? `${marks.join("\u0000")}\u0001${figured}` : figured;
}

/** The text parsed, highlighted and turned into React elements, from the cache when it is there.
 *  React elements describe and never hold DOM, so one can be mounted in any number of rows. */
function render(text: string, marks?: readonly string[], figures?: readonly FigureView[], titles?: readonly string[]): ReactElement {
  const figured = figures && figures.length > 0 ? titles ?? [] : undefined;
  const key = cacheKey(text, marks, figured);
  const hit = rendered.get(key);
  if (hit) {
    rendered.delete(key);
    rendered.set(key, hit);
    return hit;
  }
  const element = Markdown({
    children: text,
    remarkPlugins: [remarkGfm],
    rehypePlugins: [
      [rehypeHighlight, { detect: false }],
      ...(marks && marks.length > 0 ? [rehypeMarks(marks)] : []),
      ...(figures && figures.length > 0 ? [rehypeFigures(figures, titles ?? [])] : []),
    ],
    components: COMPONENTS,
  });
  rendered.set(key, element);
  cachedChars += key.length;
  for (const [oldest] of rendered) {
    if (rendered.size <= CACHE_ENTRIES && cachedChars <= CACHE_CHARS) break;
    rendered.delete(oldest);
    cachedChars -= oldest.length;
  }
  return element;
}

/** The texts still to be prepared, in order; a newer list replaces an older one. */
let queue: string[] = [];
let scheduled = false;

/** How long one task of preparation may run: short enough to leave most of a frame to the page. */
const SLICE_MS = 4;

function prepareSome() {
  scheduled = false;
  const until = performance.now() + SLICE_MS;
  while (queue.length > 0 && performance.now() < until) {
    const text = queue.shift();
    if (text !== undefined && !rendered.has(text)) render(text);
  }
  if (queue.length > 0) schedule();
}

function schedule() {
  if (scheduled) return;
  scheduled = true;
  setTimeout(prepareSome, 0);
}

/**
 * Parses texts ahead of their rows, in slices of a few milliseconds between frames: a row that
 * then scrolls into view only builds its DOM. The parse is most of what a Markdown row costs
 * to mount, and a scroll mounts one or two rows a frame.
 */
export function prepare(texts: readonly string[]) {
  queue = texts.filter((text) => !rendered.has(text));
  if (queue.length > 0) schedule();
}

/** Whether a text is parsed and waiting in the cache (what `prepare` did, for its tests). */
export function isPrepared(text: string): boolean {
  return rendered.has(text);
}

/**
 * Markdown with GFM and highlighted code, rendered to React elements, never to raw HTML: HTML in
 * the text stays text. Each code block has its own Copy button. In its own chunk, loaded with
 * the first assistant message, so the window starts without parsing the markdown and
 * highlighting code it may not need yet.
 */
export default function MarkdownText({ text, marks, figures, titles }: { text: string; marks?: readonly string[]; figures?: readonly FigureView[]; titles?: readonly string[] }) {
  return render(text, marks, figures, titles);
}
