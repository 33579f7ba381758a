import { act, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { formatDuration } from "../components/RunHistory";
import i18n, { setLanguage } from "../i18n";
import { FakeBackend } from "../test/fakeBackend";
import { conversation, message } from "../test/fixtures";
import { renderApp } from "../test/render";
import { execution, failureReport } from "../test/workbench";

beforeEach(async () => {
  await setLanguage("en");
});

const many = (n: number) => Array.from({ length: n }, (_, i) => message({ id: `m${i + 1}`, seq: i + 1, content: `line ${i + 1}` }));

describe("the run history", () => {
  it("lists each run with its status, calls, tokens, duration and review risk, and opens its messages", async () => {
    const backend = new FakeBackend({
      conversations: [conversation({ id: "c1", title: "Invoices", messageCount: 600 })],
      messages: { c1: many(600) },
    });
    backend.executions = {
      c1: [
        execution({
          id: "e2",
          conversationId: "c1",
          task: "Only the unpaid ones",
          status: "succeeded",
          startedAt: "2026-01-01T10:05:00Z",
          finishedAt: "2026-01-01T10:07:05Z",
          modelCalls: 7,
          tokensIn: 48_210,
          tokensOut: 1_904,
          cacheReadTokens: 29_890,
          cachedPercent: 62,
          costUsd: 4.1735,
          compressions: 2,
          reviewRisk: "high",
          firstSeq: 590,
        }),
        execution({ id: "e2a", conversationId: "c1-child", parentId: "e2", depth: 1, task: "subagent", status: "succeeded" }),
        execution({
          id: "e1",
          conversationId: "c1",
          task: "Count the invoices",
          status: "failed",
          startedAt: "2026-01-01T10:00:00Z",
          finishedAt: "2026-01-01T10:00:42Z",
          modelCalls: 3,
          tokensIn: 9_000,
          tokensOut: 400,
          firstSeq: 12,
        }),
      ],
    };
    backend.install();
    const { user } = renderApp();
    await user.click(await screen.findByTestId("conversation-item"));
    await screen.findByText("line 600");
    const button = await screen.findByTestId("run-history-button");
    await waitFor(() => expect(button).toHaveTextContent("2 runs"));
    await user.click(button);
    const rows = within(screen.getByTestId("run-history")).getAllByTestId("run-row");
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent("Only the unpaid ones");
    expect(within(rows[0]!).getByTestId("run-status")).toHaveTextContent("done");
    expect(within(rows[0]!).getByTestId("run-meta")).toHaveTextContent("2 min 5 s");
    expect(within(rows[0]!).getByTestId("run-meta")).toHaveTextContent("7 model calls");
    expect(within(rows[0]!).getByTestId("run-meta")).toHaveTextContent("48.2K in · 1.9K out");
    // What the provider's prompt cache served, where it served any.
    expect(within(rows[0]!).getByTestId("run-cached")).toHaveTextContent("62% of input from cache");
    expect(within(rows[1]!).queryByTestId("run-cached")).toBeNull();
    // Its estimated cost and the compressions that made the caches miss; a run on a provider
    // without prices says there is no estimate rather than $0.
    expect(within(rows[0]!).getByTestId("run-cost")).toHaveTextContent("≈ $4.17");
    expect(within(rows[0]!).getByTestId("run-compressions")).toHaveTextContent("2 compressions");
    expect(within(rows[1]!).queryByTestId("run-cost")).toBeNull();
    expect(within(rows[1]!).getByTestId("run-cost-none")).toHaveTextContent("no cost estimate");
    expect(within(rows[1]!).getByTestId("run-cost-none")).toHaveAttribute("title", expect.stringContaining("Settings"));
    expect(within(rows[1]!).queryByTestId("run-compressions")).toBeNull();
    expect(within(rows[0]!).getByTestId("run-risk")).toHaveTextContent("high");
    expect(within(rows[1]!).getByTestId("run-status")).toHaveTextContent("failed");
    expect(within(rows[1]!).getByTestId("run-meta")).toHaveTextContent("42 s");
    expect(within(rows[1]!).queryByTestId("run-risk")).toBeNull();

    // A click shows the run's first message, read as the page around it.
    await user.click(rows[1]!);
    await waitFor(() =>
      expect(screen.getAllByTestId("message").find((m) => m.getAttribute("data-seq") === "12")).toHaveAttribute("data-highlighted", "true"),
    );
    expect(screen.queryByTestId("run-history")).toBeNull();
  });

  it("says durations in words in both languages", async () => {
    const t = i18n.t.bind(i18n) as Parameters<typeof formatDuration>[1];
    expect(formatDuration(42_000, t)).toBe("42 s");
    expect(formatDuration(3_725_000, t)).toBe("1 h 2 min");
    await setLanguage("zh");
    expect(formatDuration(125_000, t)).toBe("2 分 5 秒");
  });
});

describe("a recovery choice", () => {
  it("leaves a row where it was made: what failed, what was rolled back, what was chosen", async () => {
    const backend = new FakeBackend({
      conversations: [conversation({ id: "c1", title: "Invoices", messageCount: 4 })],
      messages: { c1: many(4) },
    });
    backend.executions = {
      c1: [
        execution({
          id: "e1",
          conversationId: "c1",
          status: "succeeded",
          answered: [{ report: failureReport({ resolution: "skip" }), afterSeq: 2 }],
        }),
      ],
    };
    backend.install();
    const { user } = renderApp();
    await user.click(await screen.findByTestId("conversation-item"));
    const row = await screen.findByTestId("failure-answered");
    expect(row).toHaveTextContent("A data problem in “Gather the invoices”.");
    expect(row).toHaveTextContent("Rolled back: 2 files restored, 1 removed, 6 messages undone.");
    expect(row).toHaveTextContent("You chose: Skip.");
    // It stands after message 2, before message 3.
    const order = [...screen.getByTestId("message-list").children].map((e) => e.getAttribute("data-seq") ?? e.getAttribute("data-testid"));
    expect(order).toEqual(["1", "2", "failure-answered", "3", "4"]);
  });

  it("says the run replanned by itself, not that the analyst chose it", async () => {
    const backend = new FakeBackend({
      conversations: [conversation({ id: "c1", title: "Invoices", messageCount: 4 })],
      messages: { c1: many(4) },
    });
    backend.executions = {
      c1: [
        execution({
          id: "e1",
          conversationId: "c1",
          status: "succeeded",
          answered: [
            { report: failureReport({ id: "f1", class: "logic", resolution: "replan", resolvedBy: "automatic", rolledBack: false }), afterSeq: 2 },
            { report: failureReport({ id: "f2", resolution: "replan", resolvedBy: "analyst" }), afterSeq: 3 },
          ],
        }),
      ],
    };
    backend.install();
    const { user } = renderApp();
    await user.click(await screen.findByTestId("conversation-item"));
    const rows = await screen.findAllByTestId("failure-answered");
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent("Decima replanned by itself");
    expect(rows[0]).not.toHaveTextContent("You chose");
    expect(rows[1]).toHaveTextContent("You chose: Replan.");
    await act(() => setLanguage("zh"));
    expect(screen.getAllByTestId("failure-answered")[0]).toHaveTextContent("Decima 自动重新规划了");
    await act(() => setLanguage("en"));
  });

  it("marks the answer a final review found a medium risk in, with its findings a click away", async () => {
    const backend = new FakeBackend({
      conversations: [conversation({ id: "c1", title: "Invoices", messageCount: 6 })],
      messages: {
        c1: [
          message({ id: "u1", seq: 1, role: "user", content: "Count the invoices" }),
          message({ id: "a1", seq: 2, role: "assistant", content: "There are 12." }),
          message({ id: "u2", seq: 3, role: "user", content: "Only the unpaid ones" }),
          message({ id: "a2", seq: 4, role: "assistant", content: "Let me look." }),
          message({ id: "a3", seq: 5, role: "assistant", content: "3 are unpaid." }),
        ],
      },
    });
    backend.executions = {
      c1: [
        execution({ id: "e1", conversationId: "c1", status: "succeeded", firstSeq: 1, reviewRisk: "low" }),
        execution({ id: "e2", conversationId: "c1", status: "succeeded", firstSeq: 3, reviewRisk: "medium" }),
      ],
    };
    backend.install();
    const { user } = renderApp();
    await user.click(await screen.findByTestId("conversation-item"));
    await screen.findByText("3 are unpaid.");
    const marks = await screen.findAllByTestId("review-mark");
    expect(marks).toHaveLength(1);
    const answer = screen.getAllByTestId("message").find((m) => m.getAttribute("data-seq") === "5")!;
    expect(within(answer).getByTestId("review-mark")).toHaveTextContent("found a medium risk in this answer");
    await user.click(within(answer).getByTestId("review-mark-open"));
    expect(await screen.findByTestId("tenth-man-review-dialog")).toBeInTheDocument();
  });
});
