import Markdown from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";
import { CopyButton } from "./CopyButton";

/** The parts of a syntax-tree node that hold text. */
type TextNode = { type: string; value?: string; children?: TextNode[] };

/** The text of a syntax-tree node, as the code block holds it. */
function textOf(node: TextNode | undefined): string {
  if (!node) return "";
  if (node.type === "text") return node.value ?? "";
  return (node.children ?? []).map(textOf).join("");
}

/**
 * Markdown with GFM and highlighted code, rendered to React elements, never to raw HTML: HTML in
 * the text stays text. Each code block has its own Copy button. In its own chunk, loaded with
 * the first assistant message, so the window starts without parsing the markdown and
 * highlighting code it may not need yet.
 */
export default function MarkdownText({ text }: { text: string }) {
  return (
    <Markdown
      remarkPlugins={[remarkGfm]}
      rehypePlugins={[[rehypeHighlight, { detect: false }]]}
      components={{
        pre: ({ node, children }) => (
          <div className="code-block">
            <CopyButton text={() => textOf(node).replace(/\n$/, "")} testId="copy-code" />
            <pre>{children}</pre>
          </div>
        ),
      }}
    >
      {text}
    </Markdown>
  );
}
