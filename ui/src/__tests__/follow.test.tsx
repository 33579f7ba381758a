import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { C1, inView, manyMessages, readerScrollsTo, shownMessage, startRun, storeMessage } from "../test/conversation";
import { FakeBackend } from "../test/fakeBackend";
import { message } from "../test/fixtures";
import { renderApp } from "../test/render";
import { execution, failureReport } from "../test/workbench";

// The list's viewport is 600 px and rows are 60 px (test/setup.ts): 20 messages overflow it.
const SEEDED = 20;

async function openLongConversation(backend: FakeBackend) {
  backend.install();
  const utils = renderApp();
  await utils.user.click(await screen.findByTestId("conversation-item"));
  await screen.findByText(`line ${SEEDED}`);
  return utils;
}

/** The newest stored message is rendered and inside the viewport. */
async function expectNewestInView(seq: number) {
  await waitFor(() => expect(shownMessage(seq)).toBeDefined());
  await waitFor(() => expect(inView(shownMessage(seq)!)).toBe(true));
}

beforeEach(async () => {
  await setLanguage("en");
});

describe("the message list follows a live run", () => {
  it("shows the stored final answer once a run ends after a recovery choice", async () => {
    const backend = new FakeBackend({ conversations: [C1], messages: { c1: manyMessages(SEEDED) } });
    const { user } = await openLongConversation(backend);
    await startRun(backend, user);
    act(() => backend.emit({ type: "execution_started", execution_id: "e1", conversation_id: "c1", workspace: "/ws", how: "run" }));
    storeMessage(backend, "c1", message({ id: "t", seq: 21, content: "go" }));
    await expectNewestInView(21);

    // A failure: the run waits in the recovery panel, and Skip goes on.
    backend.executions.c1 = [execution({ id: "e1", conversationId: "c1", status: "awaiting_user", waitingOn: failureReport() })];
    act(() => backend.emit({ type: "awaiting_choice", execution_id: "e1", failure_id: "f1", suggestions: ["retry", "skip", "replan", "abort"] }));
    const panel = await screen.findByRole("alertdialog", { name: "Failure recovery" });
    backend.executions.c1 = [execution({ id: "e1", conversationId: "c1", status: "running" })];
    await user.click(within(panel).getByRole("button", { name: "Skip" }));
    act(() => backend.emit({ type: "recovered", failure_id: "f1", choice: "skip" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());

    // The answer streams, is stored, and the run ends.
    act(() => backend.emit({ type: "text_delta", text: "There are 3 invoices" }, 0));
    storeMessage(backend, "c1", message({ id: "a", seq: 22, role: "assistant", content: "There are 3 invoices." }));
    act(() => {
      backend.emit({ type: "finished", execution_id: "e1", status: "succeeded", result: null } as never);
      backend.end({ status: "succeeded", answer: "There are 3 invoices.", error: null });
    });
    await screen.findByText("There are 3 invoices.");
    await expectNewestInView(22);
    expect(screen.queryByTestId("jump-to-latest")).toBeNull();
  });

  it("keeps following through a resume and an automatic compression", async () => {
    const backend = new FakeBackend({ conversations: [C1], messages: { c1: manyMessages(SEEDED) } });
    backend.interrupted = [execution({ id: "e9", conversationId: "c1", status: "interrupted", task: "Old task" })];
    const { user } = await openLongConversation(backend);
    await user.click(within(await screen.findByTestId("interrupted-notice")).getByRole("button", { name: "Resume" }));
    await waitFor(() => expect(backend.callsOf("execution_resume")).toHaveLength(1));
    storeMessage(backend, "c1", message({ id: "r1", seq: 21, role: "assistant", content: "resumed" }));
    await expectNewestInView(21);

    // The compaction's marker stands in the list above the newest messages: what is shown changes.
    backend.compactions.c1 = [
      { id: "auto1", level: "standard", trigger: "auto", strategy: "extract", tokensBefore: 8600, tokensAfter: 4000, startSeq: 1, endSeq: 15, undoable: true, createdAt: "2026-01-01T10:00:00Z" },
    ];
    act(() => backend.emit({ type: "compacted", compaction_id: "auto1", level: "standard", trigger: "auto", tokens_before: 8600, tokens_after: 4000 }));
    await screen.findByTestId("compaction-notice");
    await waitFor(() => expect(screen.getByTestId("message-list")).toHaveAttribute("data-count", "22"));
    storeMessage(backend, "c1", message({ id: "r2", seq: 22, role: "assistant", content: "after the compression" }));
    act(() => backend.end({ status: "succeeded", answer: "done", error: null }));
    await screen.findByText("after the compression");
    await expectNewestInView(22);
  });

  it("leaves a reader who scrolled up where they are, and offers a jump to the latest", async () => {
    const backend = new FakeBackend({ conversations: [C1], messages: { c1: manyMessages(SEEDED) } });
    const { user } = await openLongConversation(backend);
    await startRun(backend, user);
    const viewport = screen.getByTestId("message-scroll");
    readerScrollsTo(viewport, 0);
    const jump = await screen.findByRole("button", { name: "Jump to latest" });
    expect(inView(shownMessage(1)!)).toBe(true);

    storeMessage(backend, "c1", message({ id: "a", seq: 21, role: "assistant", content: "the answer" }));
    act(() => backend.end({ status: "succeeded", answer: "the answer", error: null }));
    await waitFor(() => expect(screen.getByTestId("message-list")).toHaveAttribute("data-count", "21"));
    // Not yanked down.
    expect(viewport.scrollTop).toBe(0);
    expect(inView(shownMessage(1)!)).toBe(true);

    await user.click(jump);
    await expectNewestInView(21);
    expect(screen.queryByRole("button", { name: "Jump to latest" })).toBeNull();
  });

  it("undoes a scroll the layout made, not the reader, and goes on following", async () => {
    const backend = new FakeBackend({ conversations: [C1], messages: { c1: manyMessages(SEEDED) } });
    const { user } = await openLongConversation(backend);
    await startRun(backend, user);
    const viewport = screen.getByTestId("message-scroll");
    // A busy machine lays a row out late: the content grows past the list's height and the view
    // lands above the end, with no wheel, key, touch or pointer of the reader's behind it.
    const height = viewport.scrollHeight;
    Object.defineProperty(viewport, "scrollHeight", { configurable: true, value: height + 400 });
    act(() => viewport.scrollTo({ top: height - 600 - 200 }));
    await waitFor(() => expect(viewport.scrollTop).toBe(height + 400 - 600));
    expect(screen.queryByTestId("jump-to-latest")).toBeNull();
    delete (viewport as { scrollHeight?: number }).scrollHeight;

    storeMessage(backend, "c1", message({ id: "a", seq: 21, role: "assistant", content: "the answer" }));
    act(() => backend.end({ status: "succeeded", answer: "the answer", error: null }));
    await expectNewestInView(21);
    expect(screen.queryByTestId("jump-to-latest")).toBeNull();
  });

  it("takes a click on a row for a click, not a scroll, while the layout moves", async () => {
    const backend = new FakeBackend({ conversations: [C1], messages: { c1: manyMessages(SEEDED) } });
    const { user } = await openLongConversation(backend);
    await startRun(backend, user);
    const viewport = screen.getByTestId("message-scroll");
    // A press on a row's button (the recovery panel's Skip, a Copy), then a late layout.
    fireEvent.pointerDown(shownMessage(SEEDED)!);
    const height = viewport.scrollHeight;
    Object.defineProperty(viewport, "scrollHeight", { configurable: true, value: height + 400 });
    act(() => viewport.scrollTo({ top: height - 800 }));
    await waitFor(() => expect(viewport.scrollTop).toBe(height + 400 - 600));
    expect(screen.queryByTestId("jump-to-latest")).toBeNull();
    delete (viewport as { scrollHeight?: number }).scrollHeight;
  });

  it("leaves the end when something is brought into view while nothing moves", async () => {
    const backend = new FakeBackend({ conversations: [C1], messages: { c1: manyMessages(SEEDED) } });
    const { user } = await openLongConversation(backend);
    await startRun(backend, user);
    const viewport = screen.getByTestId("message-scroll");
    // Assistive technology or automation scrolling a row into view: no input, a still layout.
    act(() => viewport.scrollTo({ top: 0 }));
    await screen.findByRole("button", { name: "Jump to latest" });
    storeMessage(backend, "c1", message({ id: "a", seq: 21, role: "assistant", content: "the answer" }));
    await waitFor(() => expect(screen.getByTestId("message-list")).toHaveAttribute("data-count", "21"));
    expect(viewport.scrollTop).toBe(0);
  });
});
