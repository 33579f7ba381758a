import { screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import type { AnswerView, FigureView, MessageView, ToolCallView } from "../bindings";
import { setLanguage } from "../i18n";
import { byteToIndex, figureRanges } from "../lib/figures";
import { C1, backendWith, shownMessage } from "../test/conversation";
import { message } from "../test/fixtures";
import { renderApp } from "../test/render";
import { review } from "../test/workbench";

/** Opens C1 and waits for its answer's row (whose text the figures cut into spans). */
async function open() {
  const utils = renderApp();
  const items = await screen.findAllByTestId("conversation-item");
  await utils.user.click(items.find((e) => e.getAttribute("data-conversation-id") === C1.id) ?? items[0]!);
  await waitFor(() => expect(shownMessage(4)).toBeDefined());
  return utils;
}

beforeEach(async () => {
  await setLanguage("en");
});

const ANSWERED: AnswerView = {
  ended: "complete",
  tokensIn: null,
  tokensOut: null,
  cacheReadTokens: null,
  costUsd: null,
  promptTruncated: false,
  callsFromText: null,
};
const call = (id: string, name: string, args: unknown): ToolCallView => ({ id, name, arguments: JSON.stringify(args) });
/** Twelve lines, so the output is folded until a figure opens it. */
const OUTPUT = `region,revenue\n${Array.from({ length: 10 }, (_, i) => `Zone${i},${500 + i}`).join("\n")}\nNorth,1234567\n[exit code 0]`;
const ANSWER = "North brought in 1,234,567, and West made 987,654 — about 1.23M in all.";
const at = (text: string, part: string) => new TextEncoder().encode(text.slice(0, text.indexOf(part))).length;

function figure(text: string, status: string, extra: Partial<FigureView> = {}): FigureView {
  const start = at(ANSWER, text);
  return { text, start, end: start + new TextEncoder().encode(text).length, status, source: null, formula: null, operands: [], recomputed: null, agrees: null, receipt: null, ...extra };
}

const SOURCE = { messageSeq: 3, start: at(OUTPUT, "1234567"), end: at(OUTPUT, "1234567") + 7, text: "1234567", subject: "revenue · North", path: null, input: false };
const FIGURES: FigureView[] = [
  figure("1,234,567", "linked", { source: SOURCE }),
  figure("987,654", "unlinked"),
  figure("1.23M", "derived", { formula: "1,234,567 + 0 = 1,234,567", operands: [SOURCE] }),
];

function conversation(answer: string): MessageView[] {
  return [
    message({ id: "m1", seq: 1, content: "Total the revenue" }),
    message({ id: "a2", seq: 2, role: "assistant", toolCalls: [call("call_0", "shell", { command: "cat sales.csv" })] }),
    message({ id: "t3", seq: 3, role: "tool", name: "shell", toolCallId: "call_0", content: OUTPUT }),
    message({ id: "a4", seq: 4, role: "assistant", content: answer, answer: ANSWERED }),
  ];
}

describe("an answer's figures", () => {
  it("are links to the output that holds them, unlinked ones are marked, and a click opens the span", async () => {
    backendWith({ messages: { c1: conversation(ANSWER) }, figures: { c1: { 4: FIGURES } } });
    const { user } = await open();
    const answer = shownMessage(4)!;
    await waitFor(() => expect(within(answer).getAllByTestId("figure")).toHaveLength(3));
    const [linked, unlinked, derived] = within(answer).getAllByTestId("figure");
    expect(linked).toHaveTextContent("1,234,567");
    expect(linked).toHaveClass("figure-linked");
    expect(linked).toHaveAttribute("title", "revenue · North, in the output of message #3: click to open it there");
    expect(unlinked).toHaveClass("figure-unlinked");
    expect(unlinked).toHaveAttribute("title", "No tool output or file the run saw holds this figure");
    expect(derived).toHaveAttribute("title", expect.stringContaining("Derived: 1,234,567 + 0 = 1,234,567"));

    // Folded, the output does not show its last rows; the figure opens it on its value.
    expect(screen.queryByTestId("figure-source")).toBeNull();
    await user.click(linked!);
    const mark = await screen.findByTestId("figure-source");
    expect(mark).toHaveTextContent(/^1234567$/);
    expect(mark.closest("details")).toHaveAttribute("open");
    await user.click(unlinked!);
    expect(screen.getByTestId("figure-source")).toHaveTextContent(/^1234567$/);
    // A linked figure is a link for the keyboard too; an unsupported one is not.
    expect(linked).toHaveAttribute("role", "link");
    expect(linked).toHaveAttribute("tabindex", "0");
    expect(unlinked).not.toHaveAttribute("role");
    linked!.focus();
    await user.keyboard("{Enter}");
    expect(await screen.findByTestId("figure-source")).toHaveTextContent(/^1234567$/);
  });

  it("say so in Chinese too, and a figure whose span no longer holds it is left as text", async () => {
    await setLanguage("zh");
    const changed = ANSWER.replace("987,654", "987,655");
    backendWith({ messages: { c1: conversation(changed) }, figures: { c1: { 4: FIGURES } } });
    await open();
    const answer = shownMessage(4)!;
    await waitFor(() => expect(within(answer).getAllByTestId("figure")).toHaveLength(2));
    expect(within(answer).getAllByTestId("figure")[0]).toHaveAttribute("title", "revenue · North，见消息 #3 的工具输出：点击打开");
  });
});

describe("a recomputed figure", () => {
  it("opens the tenth man's receipt: its value, how it got there and its code", async () => {
    const receipt = {
      value: "987,650",
      agrees: true,
      derivation: "Summed the West rows of sales.csv.",
      code: "$ python3 -c \"import pandas as pd; print(pd.read_csv('sales.csv').query('region==\\'West\\'').revenue.sum())\"\n987650",
      reviewId: "r7",
    };
    backendWith({
      messages: { c1: conversation(`${ANSWER}  `) },
      figures: { c1: { 4: [FIGURES[0]!, figure("987,654", "verified", { recomputed: "987,650", agrees: true, receipt }), FIGURES[2]!] } },
    });
    const { user } = await open();
    const answer = shownMessage(4)!;
    await waitFor(() => expect(within(answer).getAllByTestId("figure")).toHaveLength(3));
    const verified = within(answer).getAllByTestId("figure")[1]!;
    expect(verified).toHaveAttribute("role", "link");
    expect(verified).toHaveAttribute("title", expect.stringContaining("Click to read the tenth man's receipt."));
    await user.click(verified);
    const dialog = await screen.findByRole("dialog", { name: "The tenth man's receipt for 987,654" });
    expect(within(dialog).getByTestId("figure-receipt-verdict")).toHaveTextContent("987,650, which agrees");
    expect(within(dialog).getByTestId("figure-receipt-code")).toHaveTextContent("pd.read_csv('sales.csv')");
    await user.click(within(dialog).getByTestId("figure-receipt-close"));
    expect(screen.queryByTestId("figure-receipt")).toBeNull();
  });
});

describe("the review panel", () => {
  it("sends the figures the analyst marked with a recompute, numbered as the answer lists them", async () => {
    const input = { ...SOURCE, path: "inputs/sales.xlsx", input: true };
    // Another length than the other tests' answer: the window caches figures by it.
    const backend = backendWith({
      messages: { c1: conversation(`${ANSWER} `) },
      figures: { c1: { 4: [figure("1,234,567", "linked", { source: input }), ...FIGURES.slice(1)] } },
    });
    backend.review = review({ id: "r9", reviewType: "recompute", riskLevel: "low", summary: "Recomputed 2 figures.", findings: [] });
    const { user } = await open();
    const answer = shownMessage(4)!;
    await waitFor(() => expect(within(answer).getAllByTestId("figure")).toHaveLength(3));
    expect(within(answer).getAllByTestId("figure")[0]).toHaveAttribute(
      "title",
      "revenue · North, in inputs/sales.xlsx, as the run started with it: click to open the file as it is now",
    );
    // A click opens the file's preview, not a message.
    backend.previews["inputs/sales.xlsx"] = {
      kind: "table",
      columns: ["quarter", "revenue"],
      rows: [["Q3", "1234567"]],
      more: false,
      columnsTotal: null,
      sheet: "Quarters",
      sheets: 1,
    };
    await user.click(within(answer).getAllByTestId("figure")[0]!);
    expect(await screen.findByRole("dialog", { name: "inputs/sales.xlsx" })).toBeInTheDocument();
    await user.keyboard("{Escape}");
    await user.click(screen.getByTestId("tenth-man-review-button"));
    const dialog = screen.getByRole("dialog", { name: "Tenth man review" });
    await user.selectOptions(await within(dialog).findByTestId("review-type"), "recompute");
    const marks = await within(dialog).findAllByTestId("review-figure-mark");
    expect(marks).toHaveLength(3);
    expect(within(dialog).getByTestId("review-figure-marks")).toHaveTextContent("987,654 unlinked");
    await user.click(marks[2]!);
    await user.click(marks[0]!);
    await user.click(within(dialog).getByTestId("review-start"));
    await waitFor(() => expect(backend.callsOf("review_run")).toHaveLength(1));
    expect(backend.callsOf("review_run")[0]?.args).toMatchObject({ reviewType: "recompute", focus: null, figures: [1, 3] });
  });
});

describe("byte offsets", () => {
  it("are read as string indices past multibyte characters", () => {
    const text = "收入 1,234 — €5";
    expect(byteToIndex(text, new TextEncoder().encode("收入 ").length)).toBe(3);
    const f: FigureView = { text: "€5", start: new TextEncoder().encode("收入 1,234 — ").length, end: new TextEncoder().encode(text).length, status: "unlinked", source: null, formula: null, operands: [], recomputed: null, agrees: null, receipt: null };
    expect(figureRanges(text, [f])).toEqual([{ start: text.indexOf("€5"), end: text.length, k: 0 }]);
  });
});
