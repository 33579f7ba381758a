import { act, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import type { FailureReport } from "../bindings";
import { setLanguage } from "../i18n";
import { backendWith, openC1, startRun } from "../test/conversation";
import type { FakeBackend } from "../test/fakeBackend";
import { execution, failureReport } from "../test/workbench";

/** The step budget ran out: nothing rolled back on its own, so rollback is offered, skip is not. */
function stepBudget(overrides: Partial<FailureReport> = {}): FailureReport {
  return failureReport({
    id: "f1",
    class: "logic",
    message: "the step budget of 40 steps is spent",
    trigger: "step_budget",
    likelyCauses: ["the todo is larger than one budget"],
    rolledBack: false,
    filesRestored: 0,
    filesRemoved: 0,
    messagesRemoved: 0,
    suggestions: ["retry", "replan", "rollback", "abort"],
    changes: {
      added: ["out/summary.csv", "out/chart.png"],
      changed: ["invoices.csv"],
      removed: [],
      addedCount: 2,
      changedCount: 1,
      removedCount: 0,
      messagesSince: 4,
      workspaceUnknown: null,
    },
    ...overrides,
  });
}

/** What the runtime reports after rolling f1 back on request: a new failure, without rollback. */
function afterRollback(): FailureReport {
  return stepBudget({
    id: "f2",
    rolledBack: true,
    filesRestored: 1,
    filesRemoved: 2,
    messagesRemoved: 4,
    suggestions: ["retry", "replan", "abort"],
    changes: null,
  });
}

function waitingOn(report: FailureReport) {
  return execution({ id: "e1", conversationId: "c1", status: "awaiting_user", waitingOn: report });
}

/** The names of the panel's choice buttons, in order. */
function choiceNames(panel: HTMLElement): string[] {
  return within(within(panel).getByTestId("recovery-choices"))
    .getAllByRole("button")
    .map((b) => b.textContent ?? "");
}

/** A live run that waits on `report`, with its panel open. */
async function liveRunWaitingOn(backend: FakeBackend, report: FailureReport) {
  const { user } = await openC1();
  await startRun(backend, user);
  act(() => backend.emit({ type: "execution_started", execution_id: "e1", conversation_id: "c1", workspace: "/ws", how: "run" }));
  backend.executions.c1 = [waitingOn(report)];
  act(() => backend.emit({ type: "awaiting_choice", execution_id: "e1", failure_id: report.id, suggestions: report.suggestions }));
  const panel = await screen.findByRole("alertdialog", { name: "Failure recovery" });
  return { user, panel };
}

/** The runtime's events after a rollback on request, and the new failure it waits on. */
function reportRollback(backend: FakeBackend) {
  backend.executions.c1 = [waitingOn(afterRollback())];
  act(() => {
    backend.emit({ type: "recovered", failure_id: "f1", choice: "rollback" });
    backend.emit({ type: "failure", failure_id: "f2", class: "logic", message: "the step budget of 40 steps is spent", alert: false });
    backend.emit({ type: "rolled_back", failure_id: "f2", snapshot_id: "s1", files_restored: 1, files_removed: 2, messages_removed: 4 });
    backend.emit({ type: "awaiting_choice", execution_id: "e1", failure_id: "f2", suggestions: ["retry", "skip", "replan", "abort"] });
  });
}

beforeEach(async () => {
  await setLanguage("en");
});

describe("the recovery panel", () => {
  it("shows exactly the choices a step-budget failure offers, and what the todo changed", async () => {
    const backend = backendWith();
    const { user, panel } = await liveRunWaitingOn(backend, stepBudget());
    expect(choiceNames(panel)).toEqual(["Retry", "Replan", "Roll back", "Abort"]);
    expect(within(panel).queryByRole("button", { name: "Skip" })).toBeNull();
    expect(within(panel).getByRole("button", { name: "Roll back" })).toHaveAccessibleDescription(
      "Put the workspace, plan and history back to where this todo started, then choose again.",
    );
    expect(within(panel).getByTestId("recovery-rolled-back")).toHaveTextContent("Nothing.");
    const changes = within(panel).getByTestId("recovery-changes");
    expect(changes).toHaveTextContent("Since this todo started: 2 files created, 1 file changed, 4 messages stored.");
    const paths = within(changes).getByTestId("todo-changes-paths");
    expect(paths).not.toHaveAttribute("open");
    await user.click(within(paths).getByText("Paths"));
    expect(within(paths).getByRole("list", { name: "Created" })).toHaveTextContent("out/summary.csv");
    expect(within(paths).getByRole("list", { name: "Created" })).toHaveTextContent("out/chart.png");
    expect(within(paths).getByRole("list", { name: "Changed" })).toHaveTextContent("invoices.csv");
    expect(within(paths).queryByRole("list", { name: "Removed" })).toBeNull();
  });

  it("rolls back, then shows the new failure's report and its own choices", async () => {
    const backend = backendWith();
    const { user, panel } = await liveRunWaitingOn(backend, stepBudget());
    await user.click(within(panel).getByRole("button", { name: "Roll back" }));
    await waitFor(() => expect(backend.callsOf("run_choose")).toEqual([{ cmd: "run_choose", args: { runId: "run-1", choice: "rollback", guidance: null, figures: [], value: null } }]));

    reportRollback(backend);
    await waitFor(() =>
      expect(screen.getByRole("alertdialog", { name: "Failure recovery" })).toHaveAttribute("data-failure-id", "f2"),
    );
    const second = screen.getByRole("alertdialog", { name: "Failure recovery" });
    expect(choiceNames(second)).toEqual(["Retry", "Replan", "Abort"]);
    expect(within(second).getByTestId("recovery-rolled-back")).toHaveTextContent(
      "1 files restored, 2 removed, 4 messages undone",
    );
    expect(within(second).queryByTestId("recovery-changes")).toBeNull();

    await user.click(within(second).getByRole("button", { name: "Replan" }));
    await waitFor(() => expect(backend.callsOf("run_choose")[1]?.args).toEqual({ runId: "run-1", choice: "replan", guidance: null, figures: [], value: null }));
  });

  it("keeps the panel and says why when a choice is refused", async () => {
    const backend = backendWith();
    const { user, panel } = await liveRunWaitingOn(backend, stepBudget());
    backend.fail("run_choose", { code: "invalid_input", message: "failure f1 has no snapshot to roll back to any more" });
    await user.click(within(panel).getByRole("button", { name: "Roll back" }));
    const error = await within(panel).findByRole("alert");
    expect(error).toHaveTextContent("The choice was refused: failure f1 has no snapshot to roll back to any more");
    expect(error).toHaveAttribute("data-error-code", "invalid_input");
    expect(screen.getByRole("alertdialog", { name: "Failure recovery" })).toBe(panel);
    expect(within(panel).getByRole("button", { name: "Retry" })).toBeEnabled();

    // Another choice goes through, and the panel closes.
    backend.succeed("run_choose");
    backend.executions.c1 = [execution({ id: "e1", conversationId: "c1", status: "running" })];
    await user.click(within(panel).getByRole("button", { name: "Retry" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
  });

  it("on a waiting execution, rolls back through a recovered run and shows the new failure", async () => {
    const backend = backendWith({ executions: { c1: [waitingOn(stepBudget())] } });
    const { user } = await openC1();
    const panel = await screen.findByRole("alertdialog", { name: "Failure recovery" });
    expect(choiceNames(panel)).toEqual(["Retry", "Replan", "Roll back", "Abort"]);
    await user.click(within(panel).getByRole("button", { name: "Roll back" }));
    await waitFor(() => expect(backend.channels).toHaveLength(1));
    expect(backend.callsOf("execution_recover")[0]?.args).toMatchObject({ executionId: "e1", choice: "rollback" });
    act(() => backend.emit({ type: "execution_started", execution_id: "e1", conversation_id: "c1", workspace: "/ws", how: "recover" }));
    reportRollback(backend);
    await waitFor(() =>
      expect(screen.getByRole("alertdialog", { name: "Failure recovery" })).toHaveAttribute("data-failure-id", "f2"),
    );
    expect(choiceNames(screen.getByRole("alertdialog"))).toEqual(["Retry", "Replan", "Abort"]);
  });

  it("on a waiting execution, keeps the panel on a refused choice and reads the offered choices again", async () => {
    const backend = backendWith({ executions: { c1: [waitingOn(stepBudget())] } });
    const { user } = await openC1();
    const panel = await screen.findByRole("alertdialog", { name: "Failure recovery" });
    // Meanwhile the failure stopped offering rollback (its snapshot is gone): refused, nothing changes.
    backend.executions.c1 = [waitingOn(stepBudget({ suggestions: ["retry", "replan", "abort"] }))];
    await user.click(within(panel).getByRole("button", { name: "Roll back" }));
    const error = await within(panel).findByRole("alert");
    expect(error).toHaveTextContent("The choice was refused: rollback is not a choice for failure f1");
    expect(backend.channels).toHaveLength(0);
    expect(screen.getByRole("alertdialog", { name: "Failure recovery" })).toBe(panel);
    await waitFor(() => expect(choiceNames(panel)).toEqual(["Retry", "Replan", "Abort"]));
    expect(within(panel).getByRole("alert")).toBe(error);
  });

  it("names the rollback and the changes in Chinese", async () => {
    backendWith({ executions: { c1: [waitingOn(stepBudget())] } });
    const { user } = await openC1();
    await screen.findByRole("alertdialog", { name: "Failure recovery" });
    // The panel is modal: the language is switched from outside it, as Settings would.
    await act(() => setLanguage("zh"));
    void user;
    const panel = await screen.findByRole("alertdialog", { name: "故障恢复" });
    expect(choiceNames(panel)).toEqual(["重试", "重新规划", "回滚", "中止"]);
    expect(within(panel).getByRole("button", { name: "回滚" })).toHaveAccessibleDescription(
      "将工作区、计划和历史恢复到此待办开始时的状态，然后再次选择。",
    );
    expect(within(panel).getByTestId("recovery-changes")).toHaveTextContent(
      "自此待办开始以来：创建了 2 个文件，修改了 1 个文件，存储了 4 条消息。",
    );
  });

  it("takes focus to its best choice, keeps it inside, and Escape sets it aside without choosing", async () => {
    const backend = backendWith({ executions: { c1: [waitingOn(stepBudget())] } });
    const { user } = await openC1();
    const panel = await screen.findByRole("alertdialog", { name: "Failure recovery" });
    await waitFor(() => expect(within(panel).getByRole("button", { name: "Retry" })).toHaveFocus());
    for (let i = 0; i < 8; i++) {
      await user.tab();
      expect(panel.contains(document.activeElement)).toBe(true);
    }
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
    expect(await screen.findByTestId("recovery-aside")).toHaveTextContent("waits for your choice");
    expect(backend.callsOf("execution_recover")).toHaveLength(0);
    await user.click(screen.getByTestId("recovery-reopen"));
    expect(await screen.findByRole("alertdialog", { name: "Failure recovery" })).toBeInTheDocument();
  });

  it("says the failure's class and what triggered it in words, not the runtime's codes", async () => {
    backendWith({ executions: { c1: [waitingOn(stepBudget())] } });
    await openC1();
    const why = await screen.findByTestId("recovery-why");
    expect(why).toHaveTextContent("A logic problem");
    expect(why).toHaveTextContent("the run used up its step budget");
    expect(why).not.toHaveTextContent("step_budget");
    await act(() => setLanguage("zh"));
    expect(screen.getByTestId("recovery-why")).toHaveTextContent("运行用完了步数预算");
    await act(() => setLanguage("en"));
  });

  it("offers to fit an overflow to the window the server named, with its number, not a retry that cannot succeed", async () => {
    const overflow = failureReport({
      id: "f9",
      class: "context_overflow",
      message: "request (9120 tokens) exceeds the available context size (8192 tokens), try increasing it",
      trigger: "model_request",
      rolledBack: false,
      suggestions: ["compress", "replan", "skip", "abort"],
      servedWindow: 8192,
    });
    const backend = backendWith({ executions: { c1: [waitingOn(overflow)] } });
    const { user } = await openC1();
    const panel = await screen.findByRole("alertdialog", { name: "Failure recovery" });
    expect(choiceNames(panel)).toEqual(["Use the server’s 8,192 and compress", "Replan", "Skip", "Abort"]);
    expect(within(panel).getByTestId("recovery-compress")).toHaveAccessibleDescription(/8,192 tokens the server serves/);
    await act(() => setLanguage("zh"));
    expect(choiceNames(screen.getByRole("alertdialog"))[0]).toBe("采用服务器的 8,192 并压缩");
    await act(() => setLanguage("en"));
    await user.click(within(panel).getByTestId("recovery-compress"));
    await waitFor(() => expect(backend.callsOf("execution_recover")[0]?.args).toMatchObject({ executionId: "e1", choice: "compress" }));
  });

  it("words compress without a number when the refusal named no window", async () => {
    const overflow = failureReport({
      class: "context_overflow",
      trigger: "model_request",
      suggestions: ["compress", "replan", "abort"],
      servedWindow: null,
    });
    backendWith({ executions: { c1: [waitingOn(overflow)] } });
    await openC1();
    const panel = await screen.findByRole("alertdialog", { name: "Failure recovery" });
    expect(choiceNames(panel)[0]).toBe("Compress and retry");
  });

  it("takes what the analyst types while a failure waits as guidance with the choice, never drops it", async () => {
    const backend = backendWith();
    const { user, panel } = await liveRunWaitingOn(backend, stepBudget());
    // Set aside, the analyst types in the composer and sends: the panel comes back with it.
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("alertdialog")).toBeNull();
    const composer = screen.getByTestId("composer-input");
    await user.type(composer, "use ledger_q3.csv");
    await user.click(screen.getByTestId("send-guidance"));
    const back = await screen.findByRole("alertdialog", { name: "Failure recovery" });
    expect(within(back).getByTestId("recovery-guidance")).toHaveValue("use ledger_q3.csv");
    expect(composer).toHaveValue("");
    await user.type(within(back).getByTestId("recovery-guidance"), " and round to cents");
    await user.click(within(back).getByRole("button", { name: "Replan" }));
    await waitFor(() =>
      expect(backend.callsOf("run_choose")[0]?.args).toEqual({
        runId: "run-1",
        choice: "replan",
        guidance: "use ledger_q3.csv and round to cents",
        figures: [],
        value: null,
      }),
    );
    expect(panel).not.toBeInTheDocument();
  });

  it("sends guidance when recovering a waiting execution, and labels the field in Chinese", async () => {
    const backend = backendWith({ executions: { c1: [waitingOn(stepBudget())] } });
    const { user } = await openC1();
    const panel = await screen.findByRole("alertdialog", { name: "Failure recovery" });
    await act(() => setLanguage("zh"));
    expect(within(panel).getByText("给代理的指引（可选）")).toBeInTheDocument();
    await act(() => setLanguage("en"));
    await user.type(within(panel).getByTestId("recovery-guidance"), "keep the Q3 rows");
    await user.click(within(panel).getByRole("button", { name: "Replan" }));
    await waitFor(() =>
      expect(backend.callsOf("execution_recover")[0]?.args).toMatchObject({ executionId: "e1", choice: "replan", guidance: "keep the Q3 rows" }),
    );
  });
});

describe("a failure of unlinked figures", () => {
  const unlinked = () =>
    failureReport({
      id: "f9",
      class: "unlinked",
      message: "2 figures of the answer are in no tool output: 987,654, 12.5%",
      todoTitle: null,
      phase: null,
      position: null,
      trigger: "unlinked_figures",
      likelyCauses: [],
      rolledBack: false,
      filesRestored: 0,
      filesRemoved: 0,
      messagesRemoved: 0,
      suggestions: ["verify", "estimate", "correct", "accept", "abort"],
      figures: [
        { text: "987,654", sentence: "West made 987,654 in 2024.", report: null },
        { text: "12.5%", sentence: "Margins rose 12.5% over the year.", report: "out/report.md" },
      ],
    });

  it("lists each figure in its sentence and answers one at a time, a correction with its value", async () => {
    const backend = backendWith();
    const { user, panel } = await liveRunWaitingOn(backend, unlinked());
    const rows = within(panel).getAllByTestId("recovery-figure");
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent("West made 987,654 in 2024.");
    // A report's figure says which report it is in; the answer's says nothing more.
    expect(within(rows[0]!).queryByTestId("recovery-figure-report")).toBeNull();
    expect(within(rows[1]!).getByTestId("recovery-figure-report")).toHaveTextContent("In the report out/report.md, which the run wrote:");
    expect(within(rows[0]!).getByText("987,654")).toHaveClass("figure-unlinked");
    expect(within(rows[1]!).getByTestId("recovery-figure-correct")).toBeDisabled();
    // A correction is made on a figure's row, where its value is typed: not for all at once.
    expect(within(within(panel).getByTestId("recovery-choices")).queryByRole("button", { name: "Correct" })).toBeNull();
    await user.type(within(rows[1]!).getByTestId("recovery-figure-value"), "12.1%");
    await user.click(within(rows[1]!).getByTestId("recovery-figure-correct"));
    await waitFor(() =>
      expect(backend.callsOf("run_choose")[0]?.args).toEqual({ runId: "run-1", choice: "correct", guidance: null, figures: [2], value: "12.1%" }),
    );
  });

  it("answers every figure at once from the choices below, and reads in Chinese", async () => {
    const backend = backendWith();
    const { user, panel } = await liveRunWaitingOn(backend, unlinked());
    await act(() => setLanguage("zh"));
    expect(within(panel).getByRole("list", { name: "没有输出支撑的数字" })).toBeInTheDocument();
    expect(within(panel).getAllByTestId("recovery-figure-verify")[0]).toHaveTextContent("核实");
    await user.click(within(panel).getByTestId("recovery-estimate"));
    await waitFor(() =>
      expect(backend.callsOf("run_choose")[0]?.args).toEqual({ runId: "run-1", choice: "estimate", guidance: null, figures: [], value: null }),
    );
  });
});
