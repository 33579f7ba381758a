import { render } from "@testing-library/react";
import { Suspense } from "react";
import { describe, expect, it } from "vitest";
import "../i18n";
import MarkdownText from "./MarkdownText";
import { isPlainProse, MessageContent } from "./MessageContent";

describe("plain prose skips the markdown parser", () => {
  it("takes only text markdown would leave as paragraphs", () => {
    expect(isPlainProse("The March total is 42,170 EUR.\nIt reconciles.")).toBe(true);
    expect(isPlainProse("华东区的客户流失率在九月上升。")).toBe(true);
    for (const marked of [
      "a *b*",
      "a `b`",
      "# head",
      "| a | b |",
      "see https://x.org",
      "www.x.org",
      "a <b>",
      "AT&amp;T",
      "- item",
      "1. item",
      "> quote",
      "    code",
      "a\\_b",
      "[a](b)",
      "~~gone~~",
      "title\n===",
    ]) {
      expect(isPlainProse(marked), marked).toBe(false);
    }
  });

  it("renders the same paragraphs as the parser", async () => {
    const text = "First line\nsame paragraph.\n\n  Second paragraph: 4.2% of 1,000 rows.  \n";
    const fast = render(<MessageContent text={text} testId="x" markdown />);
    const parsed = render(
      <Suspense fallback={null}>
        <MarkdownText text={text} />
      </Suspense>,
    );
    const paragraphs = (root: HTMLElement) => [...root.querySelectorAll("p")].map((p) => p.textContent?.replace(/\s+/g, " ").trim());
    expect(paragraphs(fast.container)).toEqual(paragraphs(parsed.container));
    expect(paragraphs(fast.container)).toEqual(["First line same paragraph.", "Second paragraph: 4.2% of 1,000 rows."]);
  });
});

describe("a search's words", () => {
  it("are marked in Markdown, in plain prose and in a tool's output, never inside code's meaning", () => {
    const md = render(<MarkdownText text={"The **ledger** total, from `ledger_q3.csv`."} marks={["ledger"]} />);
    const marked = [...md.container.querySelectorAll("mark.search-mark")].map((m) => m.textContent);
    expect(marked).toEqual(["ledger", "ledger"]);
    expect(md.container.querySelector("strong mark")).not.toBeNull();
    expect(md.container.textContent).toBe("The ledger total, from ledger_q3.csv.");
    md.unmount();
    const prose = render(<MessageContent text={"Vendor 8812 is a duplicate."} testId="c" markdown marks={["8812"]} />);
    expect(prose.container.querySelector("mark")).toHaveTextContent("8812");
    prose.unmount();
    const tool = render(<MessageContent text={"id,vendor\n1,8812"} testId="c" marks={["8812"]} />);
    expect(tool.container.querySelector("pre mark")).toHaveTextContent("8812");
    expect(tool.container.querySelector("pre")?.textContent).toBe("id,vendor\n1,8812");
  });
});
