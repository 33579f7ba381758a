import { act, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { setLanguage } from "../i18n";
import { meterState } from "../components/ContextMeter";
import { C1, backendWith, inView, openC1, readerScrollsTo, shownMessage } from "../test/conversation";
import { FakeBackend, usageAt } from "../test/fakeBackend";
import { conversation, message } from "../test/fixtures";
import { renderApp } from "../test/render";
import { execution, failureReport, review } from "../test/workbench";

beforeEach(async () => {
  await setLanguage("en");
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("composer and live run", () => {
  it("starts a run, streams its text and tool cards, stops it, and reloads when it ends", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    const send = screen.getByRole("button", { name: "Send" });
    expect(send).toBeDisabled();
    await user.type(screen.getByRole("textbox", { name: "Task" }), "Count the invoices");
    await user.click(send);
    await waitFor(() => expect(backend.callsOf("run_start")).toHaveLength(1));
    expect(backend.callsOf("run_start")[0]?.args).toMatchObject({ conversationId: "c1", task: "Count the invoices" });

    act(() => {
      backend.emit({ type: "execution_started", execution_id: "e1", conversation_id: "c1", workspace: "/ws", how: "run" });
      backend.emit({ type: "tool_started", call_id: "k1", name: "shell", arguments: '{"command":"ls"}' });
    });
    const card = await screen.findByTestId("live-tool-card");
    expect(card).toHaveTextContent("shell");
    expect(card).toHaveTextContent("running");
    act(() => backend.emit({ type: "tool_finished", call_id: "k1", name: "shell", exit_code: 2, duration_ms: 15, class: null, ran: true, images: 0 }));
    expect(within(card).getByTestId("tool-exit-code")).toHaveTextContent("exit 2");
    act(() => {
      backend.emit({ type: "text_delta", text: "There are " }, 0);
      backend.emit({ type: "text_delta", text: "3 invoices" }, 1234.5);
    });
    expect(screen.getByTestId("live-text")).toHaveTextContent("There are 3 invoices");
    // When Rust forwarded the newest delta, for the latency figure.
    expect(screen.getByTestId("live-text")).toHaveAttribute("data-delta-at", "1234.5");

    await user.click(screen.getByRole("button", { name: "Stop" }));
    await waitFor(() => expect(backend.callsOf("run_stop")).toEqual([{ cmd: "run_stop", args: { runId: "run-1" } }]));

    const listsBefore = backend.callsOf("message_page").length;
    act(() =>
      backend.end({ status: null,
        answer: null,
        error: { code: "provider", message: "the provider refused the key" },
      }),
    );
    await waitFor(() => expect(backend.callsOf("message_page").length).toBeGreaterThan(listsBefore));
    expect(await screen.findByRole("alert")).toHaveTextContent("the provider refused the key");
    expect(screen.queryByTestId("live-text")).toBeNull();
    expect(screen.getByRole("button", { name: "Send" })).toBeInTheDocument();
  });

  it("clears the streamed text once it is stored, and flags a contested answer", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    await user.type(screen.getByRole("textbox", { name: "Task" }), "go");
    await user.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(backend.channels).toHaveLength(1));
    act(() => backend.emit({ type: "text_delta", text: "draft answer" }, 0));
    expect(screen.getByTestId("live-text")).toHaveTextContent("draft answer");
    act(() => backend.emit({ type: "message_stored", seq: 3, role: "assistant" }));
    expect(screen.getByTestId("live-text")).not.toHaveTextContent("draft answer");
    backend.latestReview = review({ id: "r", trigger: "system" });
    act(() => backend.emit({ type: "review_finished", review_id: "r", risk_level: "high", findings: 1, contested: true, cached: false }));
    expect(screen.getByTestId("run-contested")).toBeInTheDocument();
    // The banner leads to the review that contests the answer.
    await user.click(screen.getByTestId("run-contested-open"));
    expect(await screen.findByTestId("review-result")).toHaveTextContent("The count ignores the ledger.");
    expect(backend.callsOf("review_run")).toHaveLength(0);
  });
});

describe("context meter", () => {
  it("is a meter named Context usage, in percent, coloured by threshold", () => {
    expect([69, 70, 84, 85, 89, 90].map(meterState)).toEqual(["ok", "warn", "warn", "compress", "compress", "deep"]);
  });

  it("shows the fetched usage, its breakdown, the warning, and live updates", async () => {
    const backend = backendWith({ usage: { ...usageAt(0.69), cachedPercent: 62, costUsd: 1.234 } });
    const { user } = await openC1();
    const meter = await screen.findByRole("meter", { name: "Context usage" });
    expect(meter).toHaveAttribute("aria-valuenow", "69");
    expect(meter).toHaveAttribute("data-state", "ok");
    expect(screen.queryByTestId("context-warning")).toBeNull();

    await user.click(screen.getByTestId("context-breakdown-toggle"));
    const breakdown = screen.getByTestId("context-breakdown");
    expect(within(breakdown).getAllByTestId("context-layer")).toHaveLength(2);
    expect(breakdown).toHaveTextContent("System and preset");
    // In plain words, with a bar per layer against the room the prompt has.
    expect(breakdown).toHaveTextContent("Using 6.9K of 10K tokens (the model's window is 12K; the rest is kept for its answer).");
    // What the conversation's runs read from the providers' caches, and what they cost.
    expect(within(breakdown).getByTestId("context-cache-share")).toHaveTextContent(
      "62% of the input this conversation's runs sent was read from the providers' prompt caches.",
    );
    expect(within(breakdown).getByTestId("context-cost")).toHaveTextContent(/^Runs \$1\.23$/);
    const bars = breakdown.querySelectorAll("meter.context-layer-bar");
    expect([...bars].map((b) => [b.getAttribute("value"), b.getAttribute("max")])).toEqual([
      ["500", "10000"],
      ["6400", "10000"],
    ]);

    await user.type(screen.getByRole("textbox", { name: "Task" }), "go");
    await user.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(backend.channels).toHaveLength(1));
    act(() => backend.emit({ type: "context_usage", usage: 0.72, used: 7200, input_room: 10000, layers: [] }));
    expect(meter).toHaveAttribute("aria-valuenow", "72");
    expect(meter).toHaveAttribute("data-state", "warn");
    expect(screen.getByTestId("context-warning")).toHaveTextContent("over 70%");
    act(() => backend.emit({ type: "context_usage", usage: 0.86, used: 8600, input_room: 10000, layers: [] }));
    expect(meter).toHaveAttribute("data-state", "compress");
    act(() => backend.emit({ type: "context_usage", usage: 0.91, used: 9100, input_room: 10000, layers: [] }));
    expect(meter).toHaveAttribute("data-state", "deep");
  });
});

describe("context meter popovers", () => {
  it("closes the warning with its ×, brings it back only when fuller, and closes the breakdown on Escape", async () => {
    const backend = backendWith({ usage: usageAt(0.72) });
    const { user } = await openC1();
    expect(await screen.findByTestId("context-warning")).toHaveTextContent("over 70%");
    await user.click(screen.getByTestId("context-warning-close"));
    expect(screen.queryByTestId("context-warning")).toBeNull();
    const toggle = screen.getByTestId("context-breakdown-toggle");
    await user.click(toggle);
    expect(screen.getByTestId("context-breakdown")).toBeInTheDocument();
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("context-breakdown")).toBeNull();
    expect(toggle).toHaveFocus();
    // Still dismissed at the same level; back once the context is fuller.
    expect(screen.queryByTestId("context-warning")).toBeNull();
    await user.type(screen.getByRole("textbox", { name: "Task" }), "go");
    await user.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(backend.channels).toHaveLength(1));
    act(() => backend.emit({ type: "context_usage", usage: 0.74, used: 7400, input_room: 10000, layers: [] }));
    expect(screen.queryByTestId("context-warning")).toBeNull();
    act(() => backend.emit({ type: "context_usage", usage: 0.86, used: 8600, input_room: 10000, layers: [] }));
    expect(screen.getByTestId("context-warning")).toHaveTextContent("over 85%");
  });
});

describe("a dismissed context warning", () => {
  it("stays dismissed on the next visit and waits while the Find bar is open", async () => {
    backendWith({ usage: usageAt(0.86), conversations: [C1, conversation({ id: "c2", title: "Other" })] });
    const { user } = await openC1();
    expect(await screen.findByTestId("context-warning")).toHaveTextContent("over 85%");
    // The Find bar opens where the warning floats: the warning waits, and comes back after.
    await user.click(screen.getByRole("button", { name: "Find" }));
    expect(await screen.findByTestId("find-bar")).toBeInTheDocument();
    expect(screen.queryByTestId("context-warning")).toBeNull();
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("find-bar")).toBeNull());
    expect(await screen.findByTestId("context-warning")).toBeInTheDocument();
    await user.click(screen.getByTestId("context-warning-close"));
    const item = (id: string) => screen.getAllByTestId("conversation-item").find((e) => e.getAttribute("data-conversation-id") === id)!;
    await user.click(item("c2"));
    await waitFor(() => expect(screen.getByTestId("conversation-view")).toHaveAttribute("data-conversation-id", "c2"));
    await user.click(item("c1"));
    await waitFor(() => expect(screen.getByTestId("conversation-view")).toHaveAttribute("data-conversation-id", "c1"));
    await screen.findByTestId("context-usage");
    expect(screen.queryByTestId("context-warning")).toBeNull();
  });
});

describe("counts during a run", () => {
  it("follow the stored messages in the header while the run goes on", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    expect(screen.getByTestId("conversation-view")).toHaveTextContent("2 messages");
    await user.type(screen.getByRole("textbox", { name: "Task" }), "go");
    await user.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(backend.channels).toHaveLength(1));
    backend.conversations[0] = { ...backend.conversations[0]!, messageCount: 4, tokens: 512 };
    act(() => backend.emit({ type: "message_stored", seq: 3, role: "user" }));
    act(() => backend.emit({ type: "message_stored", seq: 4, role: "assistant" }));
    await waitFor(() => expect(screen.getByTestId("conversation-view")).toHaveTextContent("4 messages"), { timeout: 3000 });
    expect(screen.getByTestId("live-run")).toBeInTheDocument();
  });
});

describe("runs the analyst ended", () => {
  it("shows where a run was stopped and where one was aborted, and the todo it left as cancelled", async () => {
    backendWith({
      executions: {
        c1: [
          execution({
            id: "e2",
            conversationId: "c1",
            status: "cancelled",
            ending: { by: "abort", step: 7, afterSeq: 2 },
            todos: [
              { id: "a", title: "Gather", status: "completed", phase: null, checkpoint: false, pinned: false, reason: null },
              { id: "b", title: "Report", status: "cancelled" as const, phase: null, checkpoint: false, pinned: false, reason: "aborted by the analyst after a failure, at step 7" },
            ],
          }),
          execution({ id: "e1", conversationId: "c1", status: "cancelled", ending: { by: "stop", step: 3, afterSeq: 1 } }),
        ],
      },
    });
    await openC1();
    const stopped = await screen.findByText("Stopped by you at step 3");
    // Once in the conversation where it ended, once as the reason of the todo it cancelled.
    const [aborted, reason] = screen.getAllByText("Aborted by you after a failure, at step 7");
    expect(reason!.closest("[data-testid=todo]")).toHaveTextContent("Report");
    // In reading order: message 1, the stop, message 2, the abort.
    const order = [...document.querySelectorAll("[data-testid=message], [data-testid=run-ended]")].map(
      (e) => e.getAttribute("data-seq") ?? e.getAttribute("data-ended-by"),
    );
    expect(order).toEqual(["1", "stop", "2", "abort"]);
    expect(stopped.closest("[data-testid=run-ended]")).toHaveAttribute("data-execution-id", "e1");
    expect(aborted!.closest("[data-testid=run-ended]")).toHaveAttribute("data-execution-id", "e2");
    const plan = screen.getByTestId("todo-panel");
    expect(within(plan).getByText("Report").closest("li")).toHaveTextContent("cancelled");
  });

  it("words the analyst's cancellation of a todo in the window's language, and keeps a model's own reason", async () => {
    const todos = [
      { id: "b", title: "Report", status: "cancelled" as const, phase: null, checkpoint: false, pinned: false, reason: "stopped by the analyst at step 4" },
      { id: "c", title: "Chart", status: "cancelled" as const, phase: null, checkpoint: false, pinned: false, reason: "not needed: the table says it" },
    ];
    backendWith({
      executions: {
        c1: [execution({ id: "e1", conversationId: "c1", status: "cancelled", ending: { by: "stop", step: 4, afterSeq: 2 }, todos })],
      },
    });
    await act(() => setLanguage("zh"));
    try {
      await openC1();
      const plan = await screen.findByTestId("todo-panel");
      const report = within(plan).getByText("Report").closest("li")!;
      expect(report).toHaveTextContent("你在第 4 步停止了运行");
      expect(report).not.toHaveTextContent("stopped by the analyst");
      expect(within(plan).getByText("Chart").closest("li")).toHaveTextContent("not needed: the table says it");
    } finally {
      await act(() => setLanguage("en"));
    }
  });
});

describe("plan and subagents", () => {
  it("shows todos by phase with checkpoint and snapshot markers, and live changes", async () => {
    const backend = backendWith({
      executions: {
        c1: [
          execution({
            id: "e1",
            conversationId: "c1",
            todos: [
              { id: "a", title: "Gather", status: "completed", phase: "One", checkpoint: false, pinned: false, reason: null },
              { id: "b", title: "Report", status: "pending", phase: "Two", checkpoint: true, pinned: false, reason: null },
            ],
            snapshotTodoIds: ["a"],
          }),
          execution({ id: "e2", conversationId: "child-c", parentId: "e1", depth: 1, task: "Check the ledger", status: "succeeded" }),
        ],
      },
    });
    // A later run without a plan (listed first, newest first) leaves this plan in sight.
    backend.executions.c1!.unshift(execution({ id: "e0", conversationId: "c1", status: "succeeded" }));
    const { user } = await openC1();
    const panel = await screen.findByRole("region", { name: "Plan" });
    const todos = within(panel).getAllByTestId("todo");
    expect(todos.map((t) => t.getAttribute("data-status"))).toEqual(["completed", "pending"]);
    expect(within(panel).getAllByTestId("todo-phase")).toHaveLength(2);
    expect(within(todos[0]!).getByTestId("todo-snapshot")).toBeInTheDocument();
    expect(within(todos[1]!).getByTestId("todo-checkpoint")).toBeInTheDocument();
    // In words: done, and what the marks mean.
    expect(within(todos[0]!).getByTestId("todo-status")).toHaveTextContent("done");
    expect(within(todos[0]!).getByTestId("todo-snapshot")).toHaveTextContent("can roll back here");
    expect(within(todos[1]!).getByTestId("todo-checkpoint")).toHaveTextContent("checkpoint");

    const tree = screen.getByRole("region", { name: "Subagents" });
    const node = within(tree).getByTestId("subagent");
    expect(node).toHaveAttribute("data-depth", "1");
    expect(node).toHaveTextContent("Check the ledger");

    await user.type(screen.getByRole("textbox", { name: "Task" }), "go");
    await user.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(backend.channels).toHaveLength(1));
    act(() => {
      backend.emit({
        type: "todos_changed",
        todos: [{ id: "x", title: "New plan", status: "failed", phase: null, checkpoint: false, pinned: false, reason: "no ledger" }],
      });
      backend.emit({ type: "subagent_started", parent_id: "e1", execution_id: "e3", conversation_id: "c3", depth: 2, task: "Deeper", status: "x" } as never);
    });
    expect(within(panel).getByTestId("todo")).toHaveTextContent("no ledger");
    const nodes = within(tree).getAllByTestId("subagent");
    expect(nodes.map((n) => n.getAttribute("data-depth"))).toEqual(["1", "2"]);

    // A click opens the child's conversation.
    backend.messages["child-c"] = [message({ id: "cm", seq: 1, content: "The ledger holds 2 files" })];
    await user.click(nodes[0]!);
    expect(await screen.findByText("The ledger holds 2 files")).toBeInTheDocument();
    expect(screen.getByTestId("conversation-view")).toHaveAttribute("data-conversation-id", "child-c");
  });

  it("lists a subagent whose conversation was deleted without offering to open it", async () => {
    backendWith({
      executions: {
        c1: [
          execution({ id: "e1", conversationId: "c1" }),
          execution({ id: "e2", conversationId: "gone-c", parentId: "e1", depth: 1, task: "Check the ledger", status: "succeeded", conversationDeleted: true }),
        ],
      },
    });
    const { user } = await openC1();
    const tree = await screen.findByRole("region", { name: "Subagents" });
    const node = within(tree).getByTestId("subagent");
    expect(node).toHaveTextContent("Check the ledger");
    expect(node).toHaveTextContent("conversation deleted");
    expect(within(tree).queryByRole("button")).toBeNull();
    await user.click(node);
    expect(screen.getByTestId("conversation-view")).toHaveAttribute("data-conversation-id", "c1");
  });
});

describe("a subagent's conversation deleted on its own", () => {
  it("is said when a link to it is followed, and nothing opens", async () => {
    const backend = backendWith({
      messages: {
        c1: [
          message({ id: "m1", seq: 1, content: "Chart it" }),
          message({ id: "m2", seq: 2, role: "assistant", content: "Charted." }),
        ],
      },
      workspaceFiles: {
        c1: [{ path: "chart.png", size: 70, modifiedMs: 0, writtenBy: { by: "call", callId: "call_1", messageSeq: 3, tool: "shell", conversationId: "gone-c", atMs: 0 } }],
      },
      executions: {
        c1: [
          execution({ id: "e1", conversationId: "c1" }),
          execution({ id: "e2", conversationId: "gone-c", parentId: "e1", depth: 1, task: "Draw the chart", status: "succeeded" }),
        ],
      },
    });
    backend.goneConversations = ["gone-c"];
    const { user } = await openC1("Charted.");
    await user.click(await screen.findByTestId("workspace-writer"));
    expect(await screen.findByText(/was deleted: its conversation cannot be opened/)).toBeInTheDocument();
    expect(screen.getByTestId("conversation-view")).toHaveAttribute("data-conversation-id", "c1");
  });
});

describe("a subagent's own conversation", () => {
  it("does not list itself, says whose workspace it works in, and gives the folder's path where no file manager opens it", async () => {
    const backend = backendWith({
      conversations: [conversation({ id: "child-c", title: "Check the ledger", messageCount: 1, parentId: "c1" }), C1],
      messages: { "child-c": [message({ id: "k1", seq: 1, content: "Check the ledger" })] },
      executions: {
        "child-c": [execution({ id: "e2", conversationId: "child-c", parentId: "e1", depth: 1, task: "Check the ledger", status: "succeeded" })],
      },
    });
    backend.workspaceOwners = { "child-c": { conversationId: "c1", title: "Invoices" } };
    backend.noFileManager = true;
    const { user } = renderApp();
    const items = await screen.findAllByTestId("conversation-item");
    await user.click(items.find((e) => e.getAttribute("data-conversation-id") === "child-c")!);
    await screen.findByTestId("workspace-owner");
    expect(screen.queryByRole("region", { name: "Subagents" })).toBeNull();
    expect(screen.getByTestId("workspace-owner")).toHaveTextContent("A subagent works in the workspace of Invoices");
    await user.click(screen.getByTestId("workspace-open-folder"));
    const path = await screen.findByTestId("workspace-folder-path");
    expect(path).toHaveTextContent("No file manager opened it. The folder is /home/analyst/.local/share/decima/workspaces/child-c");
    expect(screen.queryByTestId("workspace-open-error")).toBeNull();
    expect(within(path).getByTestId("workspace-folder-path-copy")).toHaveTextContent("Copy");
    await user.click(screen.getByTestId("workspace-owner-open"));
    await waitFor(() => expect(screen.getByTestId("conversation-view")).toHaveAttribute("data-conversation-id", "c1"));
  });
});

describe("failure recovery", () => {
  const waiting = () =>
    execution({ id: "e1", conversationId: "c1", status: "awaiting_user", waitingOn: failureReport() });

  it("answers a live run's failure through the run, then closes", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    await user.type(screen.getByRole("textbox", { name: "Task" }), "go");
    await user.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(backend.channels).toHaveLength(1));
    backend.executions.c1 = [waiting()];
    act(() => backend.emit({ type: "awaiting_choice", execution_id: "e1", failure_id: "f1", suggestions: ["retry", "skip", "replan", "abort"] }));
    const panel = await screen.findByRole("alertdialog", { name: "Failure recovery" });
    expect(panel).toHaveTextContent("Todo 1 of 2: “Gather the invoices”");
    expect(panel).toHaveTextContent("the ledger is missing");
    expect(panel).toHaveTextContent("2 files restored, 1 removed, 6 messages undone");
    // The choices this data failure offers, best first, and no others.
    const choices = within(within(panel).getByTestId("recovery-choices")).getAllByRole("button");
    expect(choices.map((b) => b.textContent)).toEqual(["Replan", "Skip", "Retry", "Abort"]);
    backend.executions.c1 = [execution({ id: "e1", conversationId: "c1", status: "running" })];
    await user.click(within(panel).getByRole("button", { name: "Skip" }));
    await waitFor(() => expect(backend.callsOf("run_choose")).toEqual([{ cmd: "run_choose", args: { runId: "run-1", choice: "skip", guidance: null, figures: [], value: null } }]));
    act(() => backend.emit({ type: "recovered", failure_id: "f1", choice: "skip" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
  });

  it("recovers an execution left waiting with no live run", async () => {
    const backend = backendWith({ executions: { c1: [waiting()] } });
    const { user } = await openC1();
    const panel = await screen.findByRole("alertdialog", { name: "Failure recovery" });
    backend.executions.c1 = [execution({ id: "e1", conversationId: "c1", status: "running" })];
    await user.click(within(panel).getByRole("button", { name: "Skip" }));
    await waitFor(() => expect(backend.callsOf("execution_recover")).toHaveLength(1));
    expect(backend.callsOf("execution_recover")[0]?.args).toMatchObject({ executionId: "e1", choice: "skip" });
    act(() => backend.emit({ type: "recovered", failure_id: "f1", choice: "skip" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
  });
});

describe("tenth man", () => {
  it("opens on the newest stored review without asking again, and starts a new one from a button", async () => {
    const backend = backendWith();
    backend.latestReview = review({ trigger: "system", reviewedThroughSeq: 2 });
    const { user } = await openC1();
    await user.click(screen.getByTestId("tenth-man-review-button"));
    expect(await screen.findByTestId("review-result")).toHaveTextContent("The count ignores the ledger.");
    expect(screen.queryByTestId("review-none")).toBeNull();
    expect(screen.getByTestId("review-when")).toHaveTextContent("The run's automatic final review · through message #2");
    expect(screen.getAllByTestId("finding")).toHaveLength(1);
    expect(backend.callsOf("review_run")).toHaveLength(0);
    expect(screen.queryByTestId("review-start")).toBeNull();
    backend.review = review({ id: "r2", riskLevel: "low", summary: "Nothing stands against it now.", findings: [] });
    await user.click(screen.getByTestId("review-new"));
    await user.click(screen.getByTestId("review-start"));
    expect(await screen.findByText("Nothing stands against it now.")).toBeInTheDocument();
    expect(backend.callsOf("review_run")).toHaveLength(1);
  });

  it("recomputes the newest run's figures from the review panel, with no focus to give", async () => {
    const backend = backendWith({ review: review() });
    const { user } = await openC1();
    await user.click(screen.getByTestId("tenth-man-review-button"));
    const dialog = screen.getByRole("dialog", { name: "Tenth man review" });
    await user.click(within(dialog).getByTestId("review-start"));
    await within(dialog).findByTestId("review-result");
    backend.review = review({
      id: "r3",
      riskLevel: "high",
      summary: "Recomputed 2 figures of the answer (message 4) from the run's inputs as they were when it started, in a fresh sandbox: 1 agree, 1 differ, 0 could not be computed.",
    });
    await user.click(within(dialog).getByTestId("review-recompute"));
    expect(await within(dialog).findByText(/Recomputed 2 figures of the answer/)).toBeInTheDocument();
    expect(backend.callsOf("review_run")[1]?.args).toMatchObject({ conversationId: "c1", reviewType: "recompute", focus: null });

    // Chosen as a type in the form, it says what it does instead of asking for a focus.
    await user.click(within(dialog).getByTestId("review-new"));
    await user.selectOptions(within(dialog).getByTestId("review-type"), "recompute");
    expect(within(dialog).getByTestId("review-recompute-hint")).toHaveTextContent("fresh sandbox");
    expect(within(dialog).queryByTestId("review-focus")).toBeNull();
  });

  it("shows a failed review in the panel, not as a banner", async () => {
    backendWith();
    const { user } = await openC1();
    await user.click(screen.getByTestId("tenth-man-review-button"));
    // Nothing stored yet: the panel says what a review is before the form.
    expect(await screen.findByTestId("review-none")).toHaveTextContent("No review of this conversation yet.");
    await user.click(await screen.findByTestId("review-start"));
    expect(await screen.findByTestId("review-error")).toHaveTextContent("no reviewer answered");
    expect(screen.queryByTestId("error-banner")).toBeNull();
  });

  it("reviews on demand and scrolls to and highlights the cited message", async () => {
    const backend = backendWith({ review: review() });
    const { user } = await openC1();
    await user.click(screen.getByRole("button", { name: "Tenth man review" }));
    const dialog = screen.getByRole("dialog", { name: "Tenth man review" });
    await user.type(within(dialog).getByTestId("review-focus"), "the ledger");
    await user.click(within(dialog).getByTestId("review-start"));
    await waitFor(() => expect(backend.callsOf("review_run")).toHaveLength(1));
    expect(backend.callsOf("review_run")[0]?.args).toMatchObject({ conversationId: "c1", reviewType: "full", focus: "the ledger" });
    expect(await within(dialog).findByTestId("review-risk")).toHaveAttribute("data-risk", "high");
    expect(within(dialog).getByTestId("finding")).toHaveTextContent("The ledger was never checked");

    await user.click(within(dialog).getByTestId("finding-evidence"));
    await waitFor(() => expect(shownMessage(2)).toHaveAttribute("data-highlighted", "true"));
    expect(inView(shownMessage(2)!)).toBe(true);
  });

  it("shows a failed review's error", async () => {
    backendWith({ review: null });
    const { user } = await openC1();
    await user.click(screen.getByRole("button", { name: "Tenth man review" }));
    await user.click(screen.getByTestId("review-start"));
    expect(await screen.findByRole("alert")).toHaveTextContent("no reviewer answered");
  });
});

describe("interrupted runs", () => {
  it("offers to resume them at start-up and streams the resumed run", async () => {
    const backend = backendWith({ interrupted: [execution({ id: "e9", conversationId: "c1", status: "interrupted", task: "Old task" })] });
    const { user } = renderApp();
    const notice = await screen.findByTestId("interrupted-notice");
    expect(notice).toHaveTextContent("Old task");
    await user.click(within(notice).getByRole("button", { name: "Resume" }));
    await waitFor(() => expect(backend.callsOf("execution_resume")).toHaveLength(1));
    expect(screen.queryByTestId("interrupted-notice")).toBeNull();
    act(() => backend.emit({ type: "text_delta", text: "resumed" }, 0));
    expect(await screen.findByTestId("live-text")).toHaveTextContent("resumed");
  });
});

describe("Chinese", () => {
  it("names the meter, the dialogs and the buttons in Chinese; test ids stay", async () => {
    const backend = backendWith({ executions: { c1: [execution({ id: "e1", conversationId: "c1", status: "awaiting_user", waitingOn: failureReport() })] } });
    const { user } = await openC1();
    // The recovery panel is modal: the language is switched from outside it, as Settings would.
    await act(() => setLanguage("zh"));
    expect(await screen.findByRole("meter", { name: "上下文用量" })).toHaveAttribute("data-testid", "context-usage");
    const panel = screen.getByRole("alertdialog", { name: "故障恢复" });
    for (const name of ["重试", "跳过", "重新规划", "中止"]) {
      expect(within(panel).getByRole("button", { name })).toBeInTheDocument();
    }
    expect(screen.getByRole("button", { name: "第十人审查" })).toHaveAttribute("data-testid", "tenth-man-review-button");
    expect(screen.getByRole("textbox", { name: "任务" })).toBeInTheDocument();
    expect(screen.getByTestId("send")).toHaveTextContent("发送");
    void backend;
    void user;
  });
});

describe("long conversations", () => {
  const many = (n: number) =>
    Array.from({ length: n }, (_, i) => message({ id: `m${i + 1}`, seq: i + 1, content: `line ${i + 1}` }));

  it("renders only the rows near the view, reads upwards on scroll, and finds cited messages above", async () => {
    const backend = new FakeBackend({ conversations: [C1], messages: { c1: many(450) } });
    backend.review = review({
      findings: [{ ...review().findings[0]!, evidenceSeqs: [3] }],
    });
    backend.install();
    const { user } = renderApp();
    await user.click(await screen.findByTestId("conversation-item"));
    // It opens at its end, with the newest page loaded and only the rows in view rendered.
    await screen.findByText("line 450");
    const list = screen.getByTestId("message-list");
    expect(list).toHaveAttribute("data-count", "200");
    expect(inView(shownMessage(450)!)).toBe(true);
    expect(screen.getAllByTestId("message").length).toBeLessThan(40);
    expect(shownMessage(251)).toBeUndefined();

    // Scrolling to the top reads the page above, and what was in view stays in view.
    const viewport = screen.getByTestId("message-scroll");
    const topSeq = () => Number(screen.getAllByTestId("message").find(inView)?.getAttribute("data-seq"));
    readerScrollsTo(viewport, 0);
    const firstInView = topSeq();
    await waitFor(() => expect(list).toHaveAttribute("data-count", "400"));
    expect(backend.callsOf("message_page")[1]?.args).toEqual({ conversationId: "c1", at: { kind: "before", seq: 251 }, limit: 200 });
    expect(topSeq()).toBe(firstInView);
    expect(screen.getAllByTestId("message").length).toBeLessThan(40);

    // A cited message above everything loaded: one read of the page around it (not every page
    // in between), brought into view and highlighted.
    await user.click(screen.getByRole("button", { name: "Tenth man review" }));
    await user.click(screen.getByTestId("review-start"));
    const readsBefore = backend.pageReads.length;
    await user.click(await screen.findByTestId("finding-evidence"));
    await waitFor(() => expect(shownMessage(3)).toHaveAttribute("data-highlighted", "true"));
    const jumpReads = backend.pageReads.slice(readsBefore);
    expect(jumpReads[0]).toEqual({ kind: "around", seq: 3 });
    expect(jumpReads.filter((r) => r.kind === "before")).toEqual([]);
    expect(Number(list.getAttribute("data-count"))).toBeLessThan(450);
    await waitFor(() => expect(inView(shownMessage(3)!)).toBe(true));
    expect(screen.getAllByTestId("message").length).toBeLessThan(40);

    // The newest messages are no longer loaded: "Jump to latest" reads them and goes there.
    await user.click(screen.getByRole("button", { name: "Close" }));
    await user.click(screen.getByTestId("jump-to-latest"));
    await waitFor(() => expect(inView(shownMessage(450)!)).toBe(true));
    expect(backend.pageReads[backend.pageReads.length - 1]).toEqual({ kind: "end" });
    expect(screen.queryByTestId("jump-to-latest")).toBeNull();
  });

  it("finds through the index, steps from the newest match up, goes to a number and to either end", async () => {
    const messages = many(3000).map((m) => (m.seq % 1000 === 7 ? { ...m, content: `Refund to IBAN DE44 (#${m.seq})` } : m));
    const backend = new FakeBackend({ conversations: [C1], messages: { c1: messages } });
    backend.install();
    const { user } = renderApp();
    await user.click(await screen.findByTestId("conversation-item"));
    await screen.findByText("line 3000");

    await user.keyboard("{Control>}f{/Control}");
    const find = await screen.findByTestId("find-input");
    await waitFor(() => expect(find).toHaveFocus());
    await user.type(find, "iban de44");
    // Three matches; the newest is shown first, read as the page around it.
    await waitFor(() => expect(screen.getByTestId("find-count")).toHaveTextContent("3 of 3"));
    expect(backend.callsOf("find_in_conversation").slice(-1)[0]?.args).toEqual({ conversationId: "c1", text: "iban de44" });
    await waitFor(() => expect(shownMessage(2007)).toHaveAttribute("data-highlighted", "true"));
    await user.keyboard("{Enter}");
    await waitFor(() => expect(shownMessage(1007)).toHaveAttribute("data-highlighted", "true"));
    expect(screen.getByTestId("find-count")).toHaveTextContent("2 of 3");
    await user.keyboard("{Enter}");
    await waitFor(() => expect(shownMessage(7)).toHaveAttribute("data-highlighted", "true"));
    expect(backend.pageReads[backend.pageReads.length - 1]).toEqual({ kind: "around", seq: 7 });
    await user.keyboard("{Shift>}{Enter}{/Shift}");
    await waitFor(() => expect(shownMessage(1007)).toHaveAttribute("data-highlighted", "true"));

    await user.clear(find);
    await user.type(find, "no such words");
    await waitFor(() => expect(screen.getByTestId("find-count")).toHaveTextContent("No matches"));
    expect(find).toHaveAttribute("aria-invalid", "true");

    await user.type(screen.getByTestId("go-to-seq"), "1500{Enter}");
    await waitFor(() => expect(shownMessage(1500)).toHaveAttribute("data-highlighted", "true"));

    await user.click(screen.getByTestId("jump-to-start"));
    await waitFor(() => expect(inView(shownMessage(1)!)).toBe(true));
    expect(backend.pageReads[backend.pageReads.length - 1]).toEqual({ kind: "after", seq: 0 });
    await user.click(screen.getByTestId("jump-to-end"));
    await waitFor(() => expect(inView(shownMessage(3000)!)).toBe(true));

    await user.click(find);
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("find-bar")).toBeNull();
  });

  it("searches every conversation from the sidebar and opens a hit at its message", async () => {
    const second = { ...C1, id: "c2", title: "Vendor audit" };
    const backend = new FakeBackend({
      conversations: [C1, second],
      messages: {
        c1: many(10),
        c2: many(5000).map((m) => (m.seq === 42 ? { ...m, content: "vendor 8812 is a duplicate" } : m)),
      },
    });
    backend.install();
    const { user } = renderApp();
    await screen.findAllByTestId("conversation-item");
    await user.keyboard("{Control>}k{/Control}");
    const search = screen.getByTestId("sidebar-search");
    await waitFor(() => expect(search).toHaveFocus());
    await user.type(search, "8812");
    // No title holds it; one message does, shown with its conversation and the words marked.
    expect(await screen.findByTestId("no-title-matches")).toBeInTheDocument();
    const hit = await screen.findByTestId("search-hit");
    expect(hit).toHaveTextContent("Vendor audit");
    expect(hit).toHaveTextContent("#42");
    expect(within(hit).getByText("8812").tagName).toBe("MARK");
    await user.click(hit);
    await waitFor(() => expect(shownMessage(42)).toHaveAttribute("data-highlighted", "true"));
    expect(screen.getByTestId("conversation-title")).toHaveTextContent("Vendor audit");
    expect(backend.pageReads[backend.pageReads.length - 1]).toEqual({ kind: "around", seq: 42 });
    await waitFor(() => expect(inView(shownMessage(42)!)).toBe(true));
    // The opened message marks the words that matched, and only that message.
    await waitFor(() => expect(shownMessage(42)!.querySelector("mark.search-mark")).toHaveTextContent("8812"));
    expect(shownMessage(41)?.querySelector("mark.search-mark") ?? null).toBeNull();
    // The results stand in for the list; a button leads back to it.
    await user.click(screen.getByTestId("search-back"));
    expect(search).toHaveValue("");
    await waitFor(() => expect(screen.getAllByTestId("conversation-item")).toHaveLength(2));
    await user.type(search, "8812");
    await screen.findByTestId("search-hit");

    // The filter narrows the titles at once; Escape clears it.
    await user.clear(search);
    await user.type(search, "audit");
    await waitFor(() => expect(screen.getAllByTestId("conversation-item")).toHaveLength(1));
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.getAllByTestId("conversation-item")).toHaveLength(2));

    backend.searchFailure = { code: "invalid_input", message: "A search is at most 500 characters." };
    await user.type(search, "x");
    expect(await screen.findByTestId("search-error")).toHaveTextContent("at most 500 characters");
  });
});

describe("compression", () => {
  it("previews, confirms, marks the spot with undo, and undoes", async () => {
    const backend = backendWith({ usage: usageAt(0.75) });
    const { user } = await openC1();
    await user.click(await screen.findByTestId("context-compress"));
    const dialog = screen.getByRole("dialog", { name: "Compress context" });
    expect(within(dialog).getByTestId("compress-confirm")).toBeDisabled();
    await user.selectOptions(within(dialog).getByTestId("compress-level"), "deep");
    await user.click(within(dialog).getByTestId("compress-preview"));
    expect(await within(dialog).findByTestId("compress-tokens")).toHaveTextContent("9,000 → 3,000 tokens");
    expect(within(dialog).getByTestId("compress-summary")).toHaveTextContent("Goal: count the invoices.");
    expect(backend.callsOf("compression_preview")[0]?.args).toEqual({ conversationId: "c1", level: "deep", strategy: "extract" });
    expect(backend.callsOf("compression_apply")).toHaveLength(0);

    await user.click(within(dialog).getByTestId("compress-confirm"));
    await waitFor(() => expect(screen.queryByRole("dialog", { name: "Compress context" })).toBeNull());
    const marker = await screen.findByTestId("compaction-marker");
    expect(marker).toHaveTextContent("#1–#1");
    // The marker stands where the summary does: after message 1, before message 2.
    const items = [...screen.getByTestId("message-list").children].map((e) => e.getAttribute("data-testid"));
    expect(items).toEqual(["message", "compaction-marker", "message"]);

    await user.click(within(marker).getByTestId("compaction-undo"));
    await waitFor(() => expect(screen.queryByTestId("compaction-marker")).toBeNull());
    expect(backend.callsOf("compression_undo")[0]?.args).toEqual({ compactionId: "k1" });
    // Undone from its marker: the notice of that compression goes too.
    expect(screen.queryByTestId("compaction-notice")).toBeNull();
  });

  /** Compresses C1 through the dialog, as the analyst does from the meter's warning. */
  async function compressManually(user: Awaited<ReturnType<typeof openC1>>["user"]) {
    await user.click(await screen.findByTestId("context-compress"));
    const dialog = screen.getByRole("dialog", { name: "Compress context" });
    await user.click(within(dialog).getByTestId("compress-preview"));
    await within(dialog).findByTestId("compress-tokens");
    await user.click(within(dialog).getByTestId("compress-confirm"));
    await waitFor(() => expect(screen.queryByRole("dialog", { name: "Compress context" })).toBeNull());
  }

  it("shows a notice with Undo after a manual compression, outside the list, until it is undone", async () => {
    const backend = backendWith({ usage: usageAt(0.75) });
    const { user } = await openC1();
    await compressManually(user);
    const notice = await screen.findByTestId("compaction-notice");
    expect(notice).toHaveAttribute("role", "status");
    expect(notice).toHaveTextContent("The context was compressed (9,000 → 3,000 tokens).");
    expect(notice).toHaveAttribute("data-trigger", "manual");
    // In sight without scrolling: it is not part of the scrolled list.
    expect(screen.getByTestId("message-scroll")).not.toContainElement(notice);
    await screen.findByTestId("compaction-marker");

    // It stays while the conversation changes (a new run's messages).
    await user.type(screen.getByRole("textbox", { name: "Task" }), "go");
    await user.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(backend.channels).toHaveLength(1));
    act(() => backend.end({ status: "succeeded", answer: "ok", error: null }));
    expect(screen.getByTestId("compaction-notice")).toBe(notice);

    const usageReads = backend.callsOf("context_usage").length;
    const pageReads = backend.callsOf("message_page").length;
    await user.click(within(notice).getByRole("button", { name: "Undo" }));
    await waitFor(() => expect(backend.callsOf("compression_undo")).toEqual([{ cmd: "compression_undo", args: { compactionId: "k1" } }]));
    await waitFor(() => expect(screen.queryByTestId("compaction-notice")).toBeNull());
    await waitFor(() => expect(screen.queryByTestId("compaction-marker")).toBeNull());
    // The meter and the list read again.
    await waitFor(() => expect(backend.callsOf("context_usage").length).toBeGreaterThan(usageReads));
    await waitFor(() => expect(backend.callsOf("message_page").length).toBeGreaterThan(pageReads));
  });

  it("dismisses the notice without undoing the compression", async () => {
    const backend = backendWith({ usage: usageAt(0.75) });
    const { user } = await openC1();
    await compressManually(user);
    const notice = await screen.findByTestId("compaction-notice");
    await user.click(within(notice).getByRole("button", { name: "Dismiss" }));
    expect(screen.queryByTestId("compaction-notice")).toBeNull();
    expect(screen.getByTestId("compaction-marker")).toBeInTheDocument();
    expect(backend.callsOf("compression_undo")).toHaveLength(0);
  });

  it("offers undo for an automatic compression during a run", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    await user.type(screen.getByRole("textbox", { name: "Task" }), "go");
    await user.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(backend.channels).toHaveLength(1));
    backend.compactions.c1 = [
      { id: "auto1", level: "standard", trigger: "auto", strategy: "extract", tokensBefore: 8600, tokensAfter: 4000, startSeq: 1, endSeq: 1, undoable: true, createdAt: "2026-01-01T10:00:00Z" },
    ];
    act(() => backend.emit({ type: "compacted", compaction_id: "auto1", level: "standard", trigger: "auto", tokens_before: 8600, tokens_after: 4000 }));
    const notice = await screen.findByTestId("compaction-notice");
    expect(notice).toHaveTextContent("The context was compressed automatically (8,600 → 4,000 tokens).");
    expect(screen.getByTestId("message-scroll")).not.toContainElement(notice);
    // The run ends: the notice stays until the analyst answers it.
    act(() => backend.end({ status: "succeeded", answer: "ok", error: null }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Send" })).toBeInTheDocument());
    expect(screen.getByTestId("compaction-notice")).toBe(notice);
    const usageReads = backend.callsOf("context_usage").length;
    await user.click(within(notice).getByTestId("compaction-notice-undo"));
    await waitFor(() => expect(backend.callsOf("compression_undo")).toEqual([{ cmd: "compression_undo", args: { compactionId: "auto1" } }]));
    await waitFor(() => expect(screen.queryByTestId("compaction-notice")).toBeNull());
    await waitFor(() => expect(backend.callsOf("context_usage").length).toBeGreaterThan(usageReads));
  });

  it("lets the notice of an automatic compression be dismissed", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    await user.type(screen.getByRole("textbox", { name: "Task" }), "go");
    await user.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(backend.channels).toHaveLength(1));
    act(() => backend.emit({ type: "compacted", compaction_id: "auto1", level: "standard", trigger: "auto", tokens_before: 8600, tokens_after: 4000 }));
    const notice = await screen.findByTestId("compaction-notice");
    await user.click(within(notice).getByTestId("compaction-notice-dismiss"));
    expect(screen.queryByTestId("compaction-notice")).toBeNull();
    expect(backend.callsOf("compression_undo")).toHaveLength(0);
  });
});
