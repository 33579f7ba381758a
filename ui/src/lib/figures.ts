/**
 * An answer's figures in the window: each linked or derived figure a link to the output that
 * holds it, each unsupported one marked. The backend gives spans in UTF-8 bytes (what Rust
 * indexes), which are turned into JavaScript string indices here.
 */
import type { TFunction } from "i18next";
import { createContext } from "react";
import type { FigureView } from "../bindings";

/** The JavaScript string index of UTF-8 byte offset `byte` of `text`. */
export function byteToIndex(text: string, byte: number): number {
  let bytes = 0;
  let i = 0;
  while (i < text.length && bytes < byte) {
    const code = text.codePointAt(i) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    i += code >= 0x10000 ? 2 : 1;
  }
  return i;
}

/** Whether a figure has a source to open: linked, or derived from sources. */
export function opensSource(f: FigureView): boolean {
  return f.source !== null || f.operands.length > 0 || f.receipt !== null;
}

/** Each figure's place in `text` as string indices, with its index among `figures`; a figure
 *  whose span does not hold its text (the answer changed) is left out. */
export function figureRanges(text: string, figures: readonly FigureView[]): { start: number; end: number; k: number }[] {
  const out: { start: number; end: number; k: number }[] = [];
  figures.forEach((f, k) => {
    const start = byteToIndex(text, f.start);
    const end = byteToIndex(text, f.end);
    const last = out[out.length - 1];
    if (end <= start || (last && start < last.end) || text.slice(start, end) !== f.text) return;
    out.push({ start, end, k });
  });
  return out;
}

/** `text[from, to)` cut into pieces, each a figure (its index among the figures) or not. */
export function splitFigures(
  text: string,
  ranges: readonly { start: number; end: number; k: number }[],
  from = 0,
  to = text.length,
): { text: string; figure?: number }[] {
  const pieces: { text: string; figure?: number }[] = [];
  let at = from;
  for (const r of ranges) {
    if (r.start < from || r.end > to) continue;
    if (r.start > at) pieces.push({ text: text.slice(at, r.start) });
    pieces.push({ text: text.slice(r.start, r.end), figure: r.k });
    at = r.end;
  }
  if (at < to) pieces.push({ text: text.slice(at, to) });
  return pieces;
}

/** The parts of a syntax tree this plugin reads and writes. */
type HastNode = { type: string; value?: string; tagName?: string; properties?: Record<string, unknown>; children?: HastNode[] };

/** The element a figure becomes: a span the list's click handler finds by `data-figure`. */
export function figureElement(text: string, k: number, f: FigureView, title: string): HastNode {
  const link = opensSource(f) ? { role: "link", tabIndex: 0 } : {};
  return {
    type: "element",
    tagName: "span",
    properties: { className: ["figure", `figure-${f.status}`], dataFigure: String(k), dataTestid: "figure", title, ...link },
    children: [{ type: "text", value: text }],
  };
}

/**
 * A rehype plugin that wraps each figure of the rendered Markdown in a span: the figures are
 * found in the text nodes in the answer's order (Markdown moves no text before another), each
 * after the one before it. Code is left alone.
 */
export function rehypeFigures(figures: readonly FigureView[], titles: readonly string[]) {
  return () => (tree: HastNode) => {
    let next = 0;
    const walk = (node: HastNode) => {
      if (!node.children || node.tagName === "code") return;
      node.children = node.children.flatMap((child) => {
        if (child.type !== "text" || !child.value || next >= figures.length) {
          walk(child);
          return [child];
        }
        const out: HastNode[] = [];
        let rest = child.value;
        while (next < figures.length) {
          const f = figures[next]!;
          const at = rest.indexOf(f.text);
          if (at < 0) break;
          if (at > 0) out.push({ type: "text", value: rest.slice(0, at) });
          out.push(figureElement(f.text, next, f, titles[next] ?? ""));
          rest = rest.slice(at + f.text.length);
          next += 1;
        }
        if (out.length === 0) return [child];
        if (rest) out.push({ type: "text", value: rest });
        return out;
      });
    };
    walk(tree);
  };
}

/** The highlighted span of a tool output: the source of a figure the analyst opened. */
export type Spot = { seq: number; start: number; end: number; nonce: number };

/** The spot to highlight, for the tool output whose message holds it. */
export const SpotContext = createContext<Spot | null>(null);

/** What a figure's tooltip says: its source, its derivation, or why nothing supports it. */
export function figureTitle(t: TFunction, f: FigureView): string {
  const base =
    f.source !== null
      ? f.source.path !== null
        ? t(f.source.input ? "figures.linkedInput" : "figures.linkedFile", {
            subject: f.source.subject || f.source.text,
            path: f.source.path,
          })
        : t("figures.linked", { subject: f.source.subject || f.source.text, seq: f.source.messageSeq })
      : f.formula !== null
        ? t("figures.derived", { formula: f.formula })
        : statusTitle(t, f);
  const receipt = f.receipt !== null ? ` ${t("figures.receiptHint")}` : "";
  if (f.agrees === false && f.recomputed !== null) return `${base} ${t("figures.differs", { value: f.recomputed })}${receipt}`;
  if (f.agrees === true && f.status !== "verified") return `${base} ${t("figures.verifiedToo")}${receipt}`;
  return `${base}${receipt}`;
}

/** The tooltip of a figure no output supports, by what was decided about it. */
function statusTitle(t: TFunction, f: FigureView): string {
  switch (f.status) {
    case "estimate":
      return t("figures.estimate");
    case "corrected":
      return t("figures.corrected");
    case "accepted":
      return t("figures.accepted");
    case "verified":
      return t("figures.verified", { value: f.recomputed ?? "" });
    default:
      return t("figures.unlinked");
  }
}
