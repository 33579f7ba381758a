import { act, fireEvent, screen, waitFor } from "@testing-library/react";
import { expect } from "vitest";
import type { MessageView } from "../bindings";
import { FakeBackend } from "./fakeBackend";
import { conversation, message } from "./fixtures";
import { renderApp } from "./render";

/** The conversation most workbench tests open: two messages. */
export const C1 = conversation({ id: "c1", title: "Invoices", messageCount: 2 });

/** `n` short user messages, seqs 1..n. */
export function manyMessages(n: number): MessageView[] {
  return Array.from({ length: n }, (_, i) => message({ id: `m${i + 1}`, seq: i + 1, content: `line ${i + 1}` }));
}

/** A fake backend holding C1 and its two messages, with `init` applied, installed. */
export function backendWith(init: Partial<FakeBackend> = {}) {
  const backend = new FakeBackend({
    conversations: [C1],
    messages: {
      c1: [
        message({ id: "m1", seq: 1, content: "Count the invoices" }),
        message({ id: "m2", seq: 2, role: "assistant", content: "Note: match the ledger" }),
      ],
    },
  });
  Object.assign(backend, init);
  return backend.install();
}

/** Renders the app and opens C1 (its last message is `lastText`). */
export async function openC1(lastText = "Note: match the ledger") {
  const utils = renderApp();
  const items = await screen.findAllByTestId("conversation-item");
  await utils.user.click(items.find((e) => e.getAttribute("data-conversation-id") === C1.id) ?? items[0]!);
  await screen.findByText(lastText);
  return utils;
}

/** Types a task and sends it; resolves once the run's channel is open. */
export async function startRun(backend: FakeBackend, user: ReturnType<typeof renderApp>["user"], task = "go") {
  const before = backend.channels.length;
  await user.type(screen.getByRole("textbox", { name: "Task" }), task);
  await user.click(screen.getByRole("button", { name: "Send" }));
  await waitFor(() => expect(backend.channels).toHaveLength(before + 1));
}

/** Stores a message in the fake and tells the run's channel, as the runtime does. */
export function storeMessage(backend: FakeBackend, conversationId: string, m: MessageView): void {
  (backend.messages[conversationId] ??= []).push(m);
  act(() => backend.emit({ type: "message_stored", seq: m.seq, role: m.role }));
}

/** The rendered row showing the message with this seq (a tool result shows on its call's
 *  row), if the virtualized list rendered it. */
export function shownMessage(seq: number): HTMLElement | undefined {
  return screen
    .queryAllByTestId("message")
    .find((m) => m.getAttribute("data-seq") === String(seq) || (m.getAttribute("data-result-seqs") ?? "").split(" ").includes(String(seq)));
}

/** The rendered result with this seq on its call's card, if the list rendered it. */
export function shownResult(seq: number): HTMLElement | undefined {
  return screen.queryAllByTestId("tool-result").find((r) => r.getAttribute("data-seq") === String(seq));
}

/** Whether a rendered row lies within the list's viewport (rows are placed by a translateY). */
export function inView(row: HTMLElement): boolean {
  const viewport = screen.getByTestId("message-scroll");
  const top = Number(/translateY\((-?[\d.]+)px\)/.exec(row.style.transform)?.[1] ?? NaN);
  return top + 1 > viewport.scrollTop && top < viewport.scrollTop + viewport.clientHeight;
}

/**
 * The reader scrolls the viewport: a wheel turn, then the scroll it makes. (A scroll without
 * the reader's input is the layout's, which the list undoes while it follows the end.)
 */
export function readerScrollsTo(viewport: HTMLElement, top: number): void {
  act(() => {
    fireEvent.wheel(viewport, { deltaY: -100 });
    viewport.scrollTo({ top });
  });
}
