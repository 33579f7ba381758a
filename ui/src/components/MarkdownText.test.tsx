import { render, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import MarkdownText, { isPrepared, prepare } from "./MarkdownText";

const TABLE = (n: number) => `| region | total |\n| --- | ---: |\n| R-${n} | ${n * 100} |\n\nChecked against \`ledger_${n}.csv\`.`;

describe("MarkdownText, prepared ahead", () => {
  afterEach(() => vi.useRealTimers());

  it("parses the texts it is given between frames, and their rows show the same Markdown", async () => {
    vi.useFakeTimers();
    const texts = [TABLE(1), TABLE(2), "```python\nprint(1)\n```"];
    prepare(texts);
    expect(texts.some(isPrepared)).toBe(false);
    await vi.runAllTimersAsync();
    expect(texts.every(isPrepared)).toBe(true);
    vi.useRealTimers();
    const prepared = render(<MarkdownText text={TABLE(1)} />);
    const fresh = render(<MarkdownText text={`${TABLE(1)} `} />);
    expect(prepared.container.querySelector("td:last-child")?.textContent).toBe("100");
    expect(prepared.container.querySelector("table")?.outerHTML).toBe(fresh.container.querySelector("table")?.outerHTML);
    expect(within(prepared.container).getByTestId("copy-table")).toBeInTheDocument();
  });

  it("drops an older list for a newer one", async () => {
    vi.useFakeTimers();
    prepare([TABLE(10), TABLE(11)]);
    prepare([TABLE(12)]);
    await vi.runAllTimersAsync();
    expect(isPrepared(TABLE(12))).toBe(true);
    expect(isPrepared(TABLE(11))).toBe(false);
  });

  it("keeps a bounded number of texts, forgetting the least recently shown", () => {
    const first = TABLE(1_000);
    render(<MarkdownText text={first} />);
    for (let i = 0; i < 610; i += 1) render(<MarkdownText text={`Total ${i}: **${i}**`} />).unmount();
    expect(isPrepared(first)).toBe(false);
    expect(isPrepared("Total 609: **609**")).toBe(true);
    // 611 renders in jsdom: seconds on a busy 2-core machine; the test is of the cache's bound,
    // not of its speed.
  }, 30_000);

  it("marks search words without reusing the unmarked rendering", () => {
    const text = "The **ledger** total.";
    render(<MarkdownText text={text} />);
    const marked = render(<MarkdownText text={text} marks={["ledger"]} />);
    expect(marked.container.querySelector("mark")?.textContent).toBe("ledger");
  });
});
