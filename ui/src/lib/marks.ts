/**
 * The words of a search marked where they stand in a message: the analyst who opened a hit
 * sees what matched, not only which message.
 */

/** The words worth marking: two characters or more (one-letter words would mark everything). */
export function searchWords(query: string): string[] {
  return [...new Set(query.split(/\s+/).map((w) => w.replace(/^["'(]+|["')]+$/g, "")).filter((w) => w.length >= 2))];
}

/** A pattern that finds any of `words`, case-insensitive; `null` when there are none. */
export function markPattern(words: readonly string[]): RegExp | null {
  if (words.length === 0) return null;
  const escaped = [...words].sort((a, b) => b.length - a.length).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`(${escaped.join("|")})`, "giu");
}

/** `text` cut into pieces, each one a match or not. */
export function splitMarks(text: string, pattern: RegExp | null): { text: string; marked: boolean }[] {
  if (!pattern) return [{ text, marked: false }];
  const pieces: { text: string; marked: boolean }[] = [];
  let at = 0;
  for (const m of text.matchAll(pattern)) {
    const start = m.index ?? 0;
    if (start > at) pieces.push({ text: text.slice(at, start), marked: false });
    pieces.push({ text: m[0], marked: true });
    at = start + m[0].length;
  }
  if (at < text.length) pieces.push({ text: text.slice(at), marked: false });
  return pieces;
}

/** The parts of a syntax tree this plugin reads and writes. */
type HastNode = { type: string; value?: string; tagName?: string; properties?: Record<string, unknown>; children?: HastNode[] };

/** A rehype plugin that wraps the matches in the rendered Markdown's text in `<mark>`. */
export function rehypeMarks(words: readonly string[]) {
  const pattern = markPattern(words);
  return () => (tree: HastNode) => {
    if (!pattern) return;
    const walk = (node: HastNode) => {
      if (!node.children) return;
      node.children = node.children.flatMap((child) => {
        if (child.type === "text" && child.value) {
          const pieces = splitMarks(child.value, pattern);
          if (pieces.length === 1 && !pieces[0]!.marked) return [child];
          return pieces.map((p) =>
            p.marked
              ? { type: "element", tagName: "mark", properties: { className: ["search-mark"] }, children: [{ type: "text", value: p.text }] }
              : { type: "text", value: p.text },
          );
        }
        walk(child);
        return [child];
      });
    };
    walk(tree);
  };
}
