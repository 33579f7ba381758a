import { screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import type { MessageView, ToolCallView } from "../bindings";
import { setLanguage } from "../i18n";
import { C1, backendWith, inView, openC1, shownMessage, shownResult } from "../test/conversation";
import { FakeBackend } from "../test/fakeBackend";
import { message } from "../test/fixtures";
import { renderApp } from "../test/render";

beforeEach(async () => {
  await setLanguage("en");
});

const call = (id: string, name: string, args: unknown): ToolCallView => ({ id, name, arguments: JSON.stringify(args) });
const asks = (seq: number, ...calls: ToolCallView[]) => message({ id: `a${seq}`, seq, role: "assistant", toolCalls: calls });
const answers = (seq: number, name: string, callId: string, content: string, extra: Partial<MessageView> = {}) =>
  message({ id: `t${seq}`, seq, role: "tool", name, toolCallId: callId, content, ...extra });

/** C1 holding `messages` after the task, opened at its last message (`lastText`). */
async function openWith(messages: MessageView[], lastText: string) {
  const backend = backendWith({ messages: { c1: [message({ id: "m1", seq: 1, content: "Count the invoices" }), ...messages] } });
  const utils = await openC1(lastText);
  return { backend, ...utils };
}

describe("a tool call and its result", () => {
  it("are one card: the call's line, then the result folded with its first lines and size, pinned from the card", async () => {
    const rows = Array.from({ length: 12 }, (_, i) => `invoice ${i + 1},${100 + i}`).join("\n");
    const { backend, user } = await openWith(
      [
        asks(2, call("call_0", "shell", { command: "cat invoices.csv" })),
        answers(3, "shell", "call_0", `${rows}\n[exit code 0]`),
        message({ id: "a4", seq: 4, role: "assistant", content: "Twelve invoices." }),
      ],
      "Twelve invoices.",
    );
    const row = shownMessage(3)!;
    expect(row).toHaveAttribute("data-seq", "2");
    expect(row).toHaveAttribute("data-result-seqs", "3");
    expect(within(row).getAllByTestId("message-role")).toHaveLength(1);
    const card = within(row).getByTestId("tool-card");
    expect(within(card).getByTestId("tool-call-line")).toHaveTextContent("cat invoices.csv");
    const result = within(card).getByTestId("tool-result");
    const output = within(result).getByTestId("tool-output");
    expect(output).not.toHaveAttribute("open");
    expect(within(output).getByTestId("tool-output-head").textContent).toBe("invoice 1,100\ninvoice 2,101\ninvoice 3,102");
    expect(output.querySelector("summary")).toHaveTextContent("(13 lines, 184 characters)");
    await user.click(output.querySelector("summary")!);
    expect(output).toHaveAttribute("open");
    expect(within(output).getByTestId("message-content")).toHaveTextContent("[exit code 0]");

    // The result is a stored message of its own: it is pinned by its seq.
    await user.click(within(result).getByTestId("result-pin"));
    await waitFor(() => expect(backend.callsOf("message_set_pinned")[0]?.args).toEqual({ conversationId: "c1", seq: 3, pinned: true }));
    await waitFor(() => expect(within(shownResult(3)!).getByTestId("pinned-marker")).toBeInTheDocument());
  });

  it("show a plan's change in words, not the plan with its ids", async () => {
    const first = call("call_0", "todo_write", {
      todos: [
        { title: "Clean columns", status: "in_progress" },
        { title: "Fit the model", status: "pending" },
      ],
    });
    const second = call("call_0", "todo_write", {
      todos: [
        { id: "td-1", title: "Clean columns", status: "completed" },
        { id: "td-2", title: "Fit the model", status: "in_progress" },
        { title: "Load the CSV", status: "pending" },
      ],
    });
    const stored = (...lines: string[]) => `The plan now:\n${lines.join("\n")}\n`;
    await openWith(
      [
        asks(2, first),
        answers(3, "todo_write", "call_0", stored("- [in_progress] Clean columns (id td-1)", "- [pending] Fit the model (id td-2)")),
        asks(4, second),
        answers(5, "todo_write", "call_0", stored("- [completed] Clean columns (id td-1)", "- [in_progress] Fit the model (id td-2)", "- [pending] Load the CSV (id td-3)")),
        message({ id: "a6", seq: 6, role: "assistant", content: "Planned." }),
      ],
      "Planned.",
    );
    const firstChange = within(shownResult(3)!).getByTestId("plan-change");
    expect(firstChange).toHaveTextContent("Added: Clean columns, Fit the model · Started: Clean columns");
    const result = shownResult(5)!;
    expect(within(result).getByTestId("plan-change")).toHaveTextContent("Added: Load the CSV · Started: Fit the model · Done: Clean columns");
    // The plan as stored, with its ids, is folded under the change.
    const storedPlan = within(result).getByTestId("tool-output");
    expect(storedPlan).not.toHaveAttribute("open");
    expect(storedPlan.querySelector("summary")).toHaveTextContent("The plan as stored");

    await setLanguage("zh");
    await waitFor(() => expect(within(shownResult(5)!).getByTestId("plan-change")).toHaveTextContent("新增：Load the CSV · 开始：Fit the model · 完成：Clean columns"));
  });

  it("head a subagent's answer with its task; its id only in the tooltip", async () => {
    await openWith(
      [
        asks(2, call("call_1", "spawn_subagent", { task: "Check the Q3 totals against the ledger" })),
        answers(3, "spawn_subagent", "call_1", "[subagent 0193f0aa-77 answered]\nThe Q3 totals **match** the ledger."),
        message({ id: "a4", seq: 4, role: "assistant", content: "Checked." }),
      ],
      "Checked.",
    );
    const result = shownResult(3)!;
    const task = within(result).getByTestId("subagent-task");
    expect(task).toHaveTextContent("Subagent's task: Check the Q3 totals against the ledger");
    expect(task).toHaveAttribute("title", "0193f0aa-77");
    expect(result).not.toHaveTextContent("0193f0aa-77");
    expect(result).not.toHaveTextContent("answered]");
    // The answer reads as the subagent wrote it: Markdown.
    expect(await within(result).findByText("match", { selector: "strong" })).toBeInTheDocument();
    expect(task.compareDocumentPosition(within(result).getByTestId("message-content")) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it("name an MCP tool in words on the card that holds its result", async () => {
    await openWith(
      [
        asks(2, call("call_2", "mcp__plots__draw_chart", { data: "q3.csv" })),
        answers(3, "mcp__plots__draw_chart", "call_2", "drawn"),
        message({ id: "a4", seq: 4, role: "assistant", content: "Drawn." }),
      ],
      "Drawn.",
    );
    const card = within(shownMessage(3)!).getByTestId("tool-card");
    expect(within(card).getByTestId("tool-call-name")).toHaveTextContent("draw chart (plots)");
    expect(within(card).getByTestId("tool-result")).toHaveTextContent("drawn");
  });
});

describe("a result found far up the conversation", () => {
  it("is brought into view on its call's card, marked with the words that found it", async () => {
    // 600 steps whose calls are all `call_0`; the result at #42 holds the words.
    const steps = Array.from({ length: 1200 }, (_, i): MessageView => {
      const seq = i + 1;
      return seq % 2 === 1
        ? asks(seq, call("call_0", "shell", { command: `step ${seq}` }))
        : answers(seq, "shell", "call_0", seq === 42 ? "vendor 8812 is a duplicate" : `step ${seq} ok`);
    });
    const backend = new FakeBackend({ conversations: [C1], messages: { c1: steps } });
    backend.install();
    const { user } = renderApp();
    await screen.findAllByTestId("conversation-item");
    await user.type(screen.getByTestId("sidebar-search"), "8812");
    await user.click(await screen.findByTestId("search-hit"));
    await waitFor(() => expect(shownResult(42)).toHaveAttribute("data-highlighted", "true"));
    expect(backend.pageReads[backend.pageReads.length - 1]).toEqual({ kind: "around", seq: 42 });
    const row = shownMessage(42)!;
    expect(row).toHaveAttribute("data-seq", "41");
    expect(row).toHaveAttribute("data-highlighted", "true");
    await waitFor(() => expect(inView(shownMessage(42)!)).toBe(true));
    await waitFor(() => expect(shownResult(42)!.querySelector("mark.search-mark")).toHaveTextContent("8812"));
    // Only the result the search found is marked, not its neighbours.
    expect(shownResult(40)?.getAttribute("data-highlighted") ?? null).toBeNull();
  });
});
