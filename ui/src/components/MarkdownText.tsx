import type { ReactNode } from "react";
import Markdown from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";
import { useTranslation } from "react-i18next";
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

/**
 * Markdown with GFM and highlighted code, rendered to React elements, never to raw HTML: HTML in
 * the text stays text. Each code block has its own Copy button. In its own chunk, loaded with
 * the first assistant message, so the window starts without parsing the markdown and
 * highlighting code it may not need yet.
 */
export default function MarkdownText({ text, marks }: { text: string; marks?: readonly string[] }) {
  return (
    <Markdown
      remarkPlugins={[remarkGfm]}
      rehypePlugins={marks && marks.length > 0 ? [[rehypeHighlight, { detect: false }], rehypeMarks(marks)] : [[rehypeHighlight, { detect: false }]]}
      components={COMPONENTS}
    >
      {text}
    </Markdown>
  );
}
