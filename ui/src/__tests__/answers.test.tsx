// Answers that are not whole (cut, stopped, looping) and a prompt the server cut, as the stored
// messages show them, with Continue; and what the conversation cost, runs beside chat turns.
import { act, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import type { AnswerEnd, AnswerView, MessageView } from "../bindings";
import { CONTINUE_TASK } from "../components/ConversationView";
import { setLanguage } from "../i18n";
import { backendWith, openC1, shownMessage } from "../test/conversation";
import { usageAt } from "../test/fakeBackend";
import { message } from "../test/fixtures";

beforeEach(async () => {
  await setLanguage("en");
});

function answer(ended: AnswerEnd, overrides: Partial<AnswerView> = {}): AnswerView {
  return {
    ended,
    tokensIn: 900,
    tokensOut: 512,
    cacheReadTokens: 0,
    costUsd: null,
    promptTruncated: false,
    callsFromText: null,
    ...overrides,
  };
}

/** C1 with the task and an answer to it that ended as `ended`. */
function withAnswer(ended: AnswerEnd, overrides: Partial<AnswerView> = {}, before: MessageView[] = []) {
  return backendWith({
    messages: {
      c1: [
        ...before,
        message({ id: "m1", seq: before.length + 1, content: "Count the invoices" }),
        message({ id: "m2", seq: before.length + 2, role: "assistant", content: "There are 3 invoices so far, and", answer: answer(ended, overrides) }),
      ],
    },
  });
}

describe("an answer that is not whole", () => {
  it("marks a cut answer, explains the mark, and Continue starts a run with the continue task", async () => {
    const backend = withAnswer("cut");
    const { user } = await openC1("There are 3 invoices so far, and");
    const item = shownMessage(2)!;
    const end = within(item).getByTestId("answer-end");
    expect(end).toHaveAttribute("data-ended", "cut");
    expect(end).toHaveTextContent("Cut by the output limit");
    expect(within(end).getByText("Cut by the output limit")).toHaveAttribute("title", expect.stringContaining("the most tokens a reply may have"));
    expect(within(item).queryByTestId("prompt-truncated")).toBeNull();

    await user.click(within(item).getByRole("button", { name: "Continue" }));
    await waitFor(() => expect(backend.callsOf("run_start")).toHaveLength(1));
    expect(CONTINUE_TASK).toBe("Continue where you stopped.");
    expect(backend.callsOf("run_start")[0]?.args).toMatchObject({ conversationId: "c1", task: "Continue where you stopped.", rewindFrom: null });
    // Like Send, it cannot start another run while this one works.
    await waitFor(() => expect(within(shownMessage(2)!).getByTestId("answer-continue")).toBeDisabled());
    act(() => backend.end({ status: "succeeded", answer: "done", error: null }));
    await waitFor(() => expect(within(shownMessage(2)!).getByTestId("answer-continue")).toBeEnabled());
  });

  it("marks a stopped answer, and Continue starts a run with the continue task", async () => {
    const backend = withAnswer("stopped");
    const { user } = await openC1("There are 3 invoices so far, and");
    const item = shownMessage(2)!;
    expect(within(item).getByTestId("answer-end")).toHaveTextContent("Stopped");
    expect(within(item).getByText("Stopped")).toHaveAttribute("title", expect.stringContaining("stopped while it was being written"));
    await user.click(within(item).getByTestId("answer-continue"));
    await waitFor(() => expect(backend.callsOf("run_start")).toHaveLength(1));
    expect(backend.callsOf("run_start")[0]?.args).toMatchObject({ conversationId: "c1", task: "Continue where you stopped." });
  });

  it("offers no Continue while the conversation is busy, as Send is not", async () => {
    const backend = withAnswer("cut");
    backend.busy.c1 = { kind: "chat", executionId: null, since: null, expiresAt: null, message: "a chat turn is answering" };
    await openC1("There are 3 invoices so far, and");
    expect(within(shownMessage(2)!).getByTestId("answer-continue")).toBeDisabled();
  });

  it("marks a looping answer and offers no Continue", async () => {
    withAnswer("looping");
    await openC1("There are 3 invoices so far, and");
    const item = shownMessage(2)!;
    expect(within(item).getByTestId("answer-end")).toHaveTextContent("Ended: it kept repeating itself");
    expect(within(item).getByText("Ended: it kept repeating itself")).toHaveAttribute("title", expect.stringContaining("over and over"));
    expect(within(item).queryByTestId("answer-continue")).toBeNull();
    expect(within(item).queryByRole("button", { name: "Continue" })).toBeNull();
  });

  it("offers Continue only under the newest answer; an older cut one keeps its mark", async () => {
    const older = [
      message({ id: "o1", seq: 1, content: "First question" }),
      message({ id: "o2", seq: 2, role: "assistant", content: "An older cut answer", answer: answer("cut") }),
    ];
    withAnswer("complete", {}, older);
    await openC1("There are 3 invoices so far, and");
    expect(within(shownMessage(2)!).getByTestId("answer-end")).toHaveTextContent("Cut by the output limit");
    expect(within(shownMessage(2)!).queryByTestId("answer-continue")).toBeNull();
    expect(within(shownMessage(4)!).queryByTestId("answer-end")).toBeNull();
  });

  it("warns when the server dropped part of the prompt", async () => {
    withAnswer("complete", { promptTruncated: true });
    await openC1("There are 3 invoices so far, and");
    const item = shownMessage(2)!;
    expect(within(item).getByTestId("prompt-truncated")).toHaveTextContent(
      "The server dropped part of the conversation from this request: its window is smaller than Decima was told. Decima re-reads it before the next request.",
    );
    expect(within(item).queryByTestId("answer-end")).toBeNull();
  });

  it("shows nothing under a complete answer", async () => {
    withAnswer("complete");
    await openC1("There are 3 invoices so far, and");
    const item = shownMessage(2)!;
    expect(within(item).queryByTestId("answer-end")).toBeNull();
    expect(within(item).queryByTestId("prompt-truncated")).toBeNull();
    expect(within(item).queryByTestId("answer-continue")).toBeNull();
  });

  it("says the marks in Chinese", async () => {
    withAnswer("cut", { promptTruncated: true });
    await openC1("There are 3 invoices so far, and");
    await act(() => setLanguage("zh"));
    const item = shownMessage(2)!;
    expect(within(item).getByTestId("answer-end")).toHaveTextContent("被输出上限截断");
    expect(within(item).getByTestId("answer-continue")).toHaveTextContent("继续");
    expect(within(item).getByTestId("prompt-truncated")).toHaveTextContent("服务器从这次请求中丢弃了部分对话");
    await act(() => setLanguage("en"));
  });
});

describe("the conversation's cost", () => {
  it("shows what the runs and the chat turns cost, side by side", async () => {
    backendWith({ usage: { ...usageAt(0.3), costUsd: 0.12, chatCostUsd: 0.03 } });
    const { user } = await openC1();
    await user.click(await screen.findByTestId("context-breakdown-toggle"));
    const cost = within(screen.getByTestId("context-breakdown")).getByTestId("context-cost");
    expect(cost).toHaveTextContent("Runs $0.12 · Chat $0.03");
    expect(cost).toHaveAttribute("title", expect.stringContaining("at the prices in Settings"));
    await act(() => setLanguage("zh"));
    expect(screen.getByTestId("context-cost")).toHaveTextContent("运行 US$0.12 · 聊天 US$0.03");
    await act(() => setLanguage("en"));
  });

  it("leaves the chat turns' cost out when none was priced", async () => {
    backendWith({ usage: { ...usageAt(0.3), costUsd: 0.12, chatCostUsd: null } });
    const { user } = await openC1();
    await user.click(await screen.findByTestId("context-breakdown-toggle"));
    const cost = within(screen.getByTestId("context-breakdown")).getByTestId("context-cost");
    expect(cost).toHaveTextContent(/^Runs \$0\.12$/);
    expect(within(cost).queryByTestId("context-cost-chat")).toBeNull();
  });

  it("shows the chat turns' cost alone when the runs were not priced", async () => {
    backendWith({ usage: { ...usageAt(0.3), costUsd: null, chatCostUsd: 0.0042 } });
    const { user } = await openC1();
    await user.click(await screen.findByTestId("context-breakdown-toggle"));
    expect(within(screen.getByTestId("context-breakdown")).getByTestId("context-cost")).toHaveTextContent(/^Chat \$0\.0042$/);
  });
});
