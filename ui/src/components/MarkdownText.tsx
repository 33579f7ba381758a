import Markdown from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";

/**
 * Markdown with GFM and highlighted code, rendered to React elements, never to raw HTML: HTML in
 * the text stays text. In its own chunk, loaded with the first assistant message, so the
 * window starts without parsing the markdown and highlighting code it may not need yet.
 */
export default function MarkdownText({ text }: { text: string }) {
  return (
    <Markdown remarkPlugins={[remarkGfm]} rehypePlugins={[[rehypeHighlight, { detect: false }]]}>
      {text}
    </Markdown>
  );
}
