import { act, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it } from "vitest";
import { DataTable } from "../components/DataTable";
import { setLanguage } from "../i18n";
import { toCsv } from "../lib/table";
import { backendWith, openC1, startRun } from "../test/conversation";
import { FakeBackend } from "../test/fakeBackend";
import { message } from "../test/fixtures";
import { execution, review } from "../test/workbench";
import { renderApp } from "../test/render";

const LOCAL = { name: "local", model: "qwen3", baseUrl: "http://localhost:8080/v1", contextWindow: 32000, hasApiKey: false };

beforeEach(async () => {
  await setLanguage("en");
  window.localStorage.clear();
});

describe("switching where runs work", () => {
  it("warns when files stay behind, copies them across on request, and says what it did", async () => {
    const backend = backendWith({ providers: [LOCAL] });
    backend.census = { "c1/host": { files: 3, bytes: 2048 } };
    backend.copyAcross = { copied: ["a.csv", "b.csv"], kept: ["c.csv"], bytes: 1500 };
    const { user } = await openC1();
    await user.click(await screen.findByTestId("run-options-button"));
    const form = screen.getByTestId("run-options");

    // Cancel: nothing is saved.
    await user.selectOptions(within(form).getByTestId("run-options-sandbox"), "docker");
    const prompt = await within(form).findByTestId("sandbox-switch");
    expect(prompt).toHaveTextContent("This conversation's 3 files (2 KB) are on this computer. Runs in Docker cannot see them.");
    await user.click(within(prompt).getByTestId("sandbox-switch-cancel"));
    expect(within(form).queryByTestId("sandbox-switch")).toBeNull();
    expect(backend.callsOf("run_options_save")).toHaveLength(0);

    // Copy and switch: saved, then copied from the host.
    await user.selectOptions(within(form).getByTestId("run-options-sandbox"), "docker");
    await user.click(await within(form).findByTestId("sandbox-switch-copy"));
    expect(await within(form).findByTestId("sandbox-switch-done")).toHaveTextContent(
      "Copied 2 files (1.5 KB) into the Docker container. 1 file was already there and is kept as it is: c.csv.",
    );
    expect(backend.callsOf("run_options_save").slice(-1)[0]?.args).toMatchObject({ sandbox: "docker" });
    expect(backend.callsOf("workspace_copy_across")[0]?.args).toEqual({ conversationId: "c1", from: "host" });
  });

  it("switches at once when the place it leaves is empty, and keeps a failed copy's switch with its error", async () => {
    const backend = backendWith({ providers: [LOCAL] });
    const { user } = await openC1();
    await user.click(await screen.findByTestId("run-options-button"));
    const form = screen.getByTestId("run-options");
    await user.selectOptions(within(form).getByTestId("run-options-sandbox"), "docker");
    await waitFor(() => expect(backend.callsOf("run_options_save")).toHaveLength(1));
    expect(within(form).queryByTestId("sandbox-switch")).toBeNull();

    backend.census = { "c1/docker": { files: 1, bytes: 10 } };
    backend.copyAcross = { code: "invalid_input", message: "the Docker engine is not running: start it, then copy again" };
    await user.selectOptions(within(form).getByTestId("run-options-sandbox"), "host");
    await user.click(await within(form).findByTestId("sandbox-switch-copy"));
    expect(await within(form).findByTestId("sandbox-switch-error")).toHaveTextContent("Docker engine is not running");
    // The switch was saved: the prompt now closes rather than cancels.
    expect(backend.callsOf("run_options_save").slice(-1)[0]?.args).toMatchObject({ sandbox: "host" });
    expect(within(form).getByTestId("sandbox-switch-cancel")).toHaveTextContent("Close");
  });

  it("says in the workspace panel where the files are, and offers to copy those left on the host", async () => {
    const backend = backendWith({ providers: [LOCAL] });
    const { user } = await openC1();
    expect(await screen.findByTestId("workspace-location")).toHaveTextContent("Files are in /data/workspaces/c1");

    backend.runOptions.c1 = { provider: null, sandbox: "docker", maxSteps: null, tenthMan: null };
    backend.leftOnHost.c1 = 2;
    backend.copyAcross = { copied: ["a.csv", "b.csv"], kept: [], bytes: 100 };
    await user.click(screen.getByTestId("workspace-add"));
    const notice = await screen.findByTestId("workspace-left-behind");
    expect(notice).toHaveTextContent("2 files in this conversation's folder on this computer are not in the container");
    expect(screen.getByTestId("workspace-location")).toHaveTextContent("the Docker container's /workspace");
    await user.click(within(notice).getByTestId("workspace-copy-in"));
    expect(await screen.findByTestId("workspace-copied")).toHaveTextContent("Copied 2 files (100 B) into the Docker container.");
    await waitFor(() => expect(screen.queryByTestId("workspace-left-behind")).toBeNull());

    // "Leave them" hides the notice until the count changes.
    backend.leftOnHost.c1 = 1;
    await user.click(screen.getByTestId("workspace-add"));
    await user.click(await screen.findByTestId("workspace-leave"));
    expect(screen.queryByTestId("workspace-left-behind")).toBeNull();
    backend.leftOnHost.c1 = 4;
    await user.click(screen.getByTestId("workspace-add"));
    expect(await screen.findByTestId("workspace-left-behind")).toHaveTextContent("4 files");
  });
});

describe("quick chat and the tenth man's provider default", () => {
  it("is a toggle beside Send, remembered per conversation", async () => {
    const backend = backendWith({ providers: [LOCAL] });
    const { user } = await openC1();
    const toggle = await screen.findByTestId("quick-chat-toggle");
    expect(toggle).not.toBeChecked();
    await user.click(toggle);
    await waitFor(() => expect(backend.callsOf("run_options_set_quick")[0]?.args).toEqual({ conversationId: "c1", quick: true }));
    expect(toggle).toBeChecked();
    expect(backend.quick.c1).toBe(true);
  });

  it("sets a provider's default from a conversation's choice, and clears it", async () => {
    const backend = backendWith({ providers: [LOCAL] });
    const { user } = await openC1();
    await user.click(await screen.findByTestId("run-options-button"));
    const form = screen.getByTestId("run-options");
    await user.selectOptions(within(form).getByTestId("run-options-tenth-man"), "off");
    await user.click(await within(form).findByTestId("tenth-man-provider-default"));
    expect(backend.callsOf("provider_tenth_man_save")[0]?.args).toEqual({ name: "local", mode: "off" });
    await user.selectOptions(within(form).getByTestId("run-options-tenth-man"), "");
    const set = await within(form).findByTestId("tenth-man-provider-default-set");
    expect(set).toHaveTextContent("local's default: tenth man off.");
    expect(within(form).getByTestId("run-options-tenth-man")).toHaveDisplayValue("Default (tenth man off)");
    await user.click(within(set).getByTestId("tenth-man-provider-default-clear"));
    expect(backend.callsOf("provider_tenth_man_save")[1]?.args).toEqual({ name: "local", mode: null });
  });
});

describe("tables", () => {
  it("are written as CSV with quoting where a cell needs it", () => {
    expect(toCsv(["name", "note"], [["a", "x,y"], ["b", 'say "hi"'], ["c", "two\nlines"]])).toBe(
      'name,note\r\na,"x,y"\r\nb,"say ""hi"""\r\nc,"two\nlines"\r\n',
    );
  });

  it("save as CSV what the table shows (filtered), and say where", async () => {
    const backend = new FakeBackend().install();
    const user = userEvent.setup();
    render(<DataTable columns={["region", "net"]} rows={[["North", "1200"], ["South", "800"]]} more={false} name="sales_q3" />);
    await user.type(screen.getByTestId("table-filter"), "north");
    await user.click(screen.getByTestId("table-save-csv"));
    expect(await screen.findByTestId("table-saved")).toHaveTextContent("Saved to /home/analyst/Documents/table.csv");
    expect(backend.callsOf("table_save_csv")[0]?.args).toMatchObject({ csv: "region,net\r\nNorth,1200\r\n", suggestedName: "sales_q3" });
  });
});

describe("run history rows", () => {
  it("list the run's own files and open its own review", async () => {
    const backend = backendWith({ providers: [LOCAL] });
    backend.executions.c1 = [
      execution({ id: "e2", conversationId: "c1", task: "Chart it", firstSeq: 5, reviewRisk: "high" }),
      execution({ id: "e1", conversationId: "c1", task: "Count the invoices", firstSeq: 1 }),
    ];
    backend.workspaceFiles.c1 = [
      { path: "chart.png", size: 10, modifiedMs: 0, writtenBy: { by: "call", callId: "k1", messageSeq: 6, tool: "shell", conversationId: null, setAside: false } },
      { path: "count.csv", size: 10, modifiedMs: 0, writtenBy: { by: "call", callId: "k0", messageSeq: 2, tool: "shell", conversationId: null, setAside: false } },
    ] as never;
    backend.runReviews.e2 = review({ id: "r2", riskLevel: "high", summary: "The chart's axis is wrong." });
    const { user } = await openC1();
    await user.click(await screen.findByTestId("run-history-button"));
    const rows = screen.getAllByTestId("run-row");
    expect(rows).toHaveLength(2);
    const firstRun = rows[1]!.closest("li")!;
    await user.click(within(firstRun).getByTestId("run-files"));
    const filter = await screen.findByTestId("workspace-run-filter");
    expect(filter).toHaveTextContent("1 file written by the run “Count the invoices”.");
    const listed = screen.getAllByTestId("workspace-file").map((f) => f.getAttribute("data-path"));
    expect(listed).toEqual(["count.csv"]);
    await user.click(screen.getByTestId("workspace-show-all"));
    await waitFor(() => expect(screen.getAllByTestId("workspace-file")).toHaveLength(2));

    await user.click(screen.getByTestId("run-history-button"));
    const newest = screen.getAllByTestId("run-row")[0]!.closest("li")!;
    expect(within(firstRun).queryByTestId("run-review")).toBeNull();
    await user.click(within(newest).getByTestId("run-review"));
    expect(await screen.findByTestId("tenth-man-review-dialog")).toHaveTextContent("The chart's axis is wrong.");
    expect(backend.callsOf("review_latest").slice(-1)[0]?.args).toEqual({ conversationId: "c1", executionId: "e2" });
  });
});

describe("the model's title", () => {
  it("asks the model for a title over the rules' one once the first run ends (the backend keeps a title the analyst gave)", async () => {
    const backend = new FakeBackend({ providers: [LOCAL] }).install();
    backend.modelTitle = "Q3 invoice check";
    const { user } = renderApp();
    await user.click(await screen.findByTestId("new-conversation-submit"));
    await screen.findByTestId("no-messages");
    await startRun(backend, user, "check the q3 invoices against the ledger please");
    await waitFor(() => expect(backend.callsOf("conversation_rename")).toHaveLength(1));
    expect(backend.callsOf("conversation_title_from_model")).toHaveLength(0);
    backend.messages[backend.conversations[0]!.id]?.push(message({ id: "a1", seq: 2, role: "assistant", content: "Checked." }));
    act(() => backend.end({ status: "succeeded", answer: "Checked.", error: null } as never));
    await waitFor(() => expect(backend.callsOf("conversation_title_from_model")).toHaveLength(1));
    expect(backend.callsOf("conversation_title_from_model")[0]?.args).toMatchObject({
      expectedTitle: "check the q3 invoices against the ledger please",
    });
    await waitFor(() => expect(screen.getAllByTestId("conversation-item")[0]).toHaveTextContent("Q3 invoice check"));
  });
});

describe("a report", () => {
  it("is exported as HTML or a folder from the Export menu, and says what it holds and what it left out", async () => {
    const backend = backendWith({ providers: [LOCAL] });
    const { user } = await openC1();
    await user.click(screen.getByTestId("export-button"));
    await user.click(screen.getByTestId("export-report-html"));
    expect(await screen.findByTestId("report-done")).toHaveTextContent(
      "Report written to /home/analyst/Documents/Invoices 2026-12-02 report.html. Charts: 2; CSVs: 1; findings: 3.",
    );
    expect(backend.callsOf("conversation_export_report")[0]?.args).toMatchObject({ conversationId: "c1", format: "html", dialogTitle: "Export a report" });

    backend.report = { path: "/home/analyst/Documents/Invoices report", charts: 0, tables: 1, findings: 0, leftOut: ["big.csv (600 MB, more than a report holds; it is in the workspace)"] };
    await user.click(screen.getByTestId("export-button"));
    await user.click(screen.getByTestId("export-report-folder"));
    expect(await screen.findByTestId("report-done")).toHaveTextContent("Left out: big.csv (600 MB");
    await user.click(screen.getByTestId("export-reveal"));
    expect(backend.callsOf("export_reveal")[0]?.args).toEqual({ path: "/home/analyst/Documents/Invoices report" });

    backend.report = { code: "conflict", message: "this conversation has no answer yet: a report holds an answer, so run a task first" };
    await user.click(screen.getByTestId("export-button"));
    await user.click(screen.getByTestId("export-report-html"));
    expect(await screen.findByTestId("export-error")).toHaveTextContent("no answer yet");
  });
});

describe("the plan panel", () => {
  it("names its run and rolls an ended run back to a todo's start, with a preview and an Undo", async () => {
    const backend = backendWith({ providers: [LOCAL] });
    const todo = (id: string, title: string, status: "completed" | "in_progress") => ({ id, title, status, phase: null, checkpoint: false, pinned: false, reason: null });
    backend.executions.c1 = [
      execution({
        id: "e1",
        conversationId: "c1",
        task: "Load and chart",
        status: "succeeded",
        todos: [todo("t1", "Load the data", "completed"), todo("t2", "Chart it", "completed")],
        snapshotTodoIds: ["t1", "t2"],
      }),
    ];
    const { user } = await openC1();
    const panel = await screen.findByTestId("todo-panel");
    expect(within(panel).getByTestId("plan-owner")).toHaveTextContent("The plan of the run “Load and chart” (done)");
    const chips = within(panel).getAllByTestId("todo-snapshot");
    await user.click(chips[1]!);
    const preview = await within(panel).findByTestId("plan-rollback-preview");
    expect(preview).toHaveTextContent("Roll back to the start of “Chart it”?");
    await waitFor(() => expect(within(preview).getByTestId("todo-changes-summary")).toHaveTextContent("1 file created"));
    expect(backend.callsOf("plan_rollback_preview")[0]?.args).toEqual({ executionId: "e1", todoId: "t2" });
    await user.click(within(preview).getByTestId("plan-rollback-confirm"));
    const done = await within(panel).findByTestId("plan-rolled-back");
    expect(done).toHaveTextContent("Rolled back to the start of “Chart it”. Files written back: 1; removed: 1; messages set aside: 6.");
    await user.click(within(done).getByTestId("plan-rollback-undo"));
    await waitFor(() => expect(within(panel).getByTestId("plan-rolled-back")).toHaveTextContent("was undone"));
    expect(backend.callsOf("plan_rollback_undo")[0]?.args).toEqual({ executionId: "e1", undo: 41 });
  });

  it("offers no rollback while its run goes", async () => {
    const backend = backendWith({ providers: [LOCAL] });
    backend.executions.c1 = [
      execution({
        id: "e1",
        conversationId: "c1",
        task: "Load and chart",
        status: "running",
        todos: [{ id: "t1", title: "Load the data", status: "in_progress", phase: null, checkpoint: false, pinned: false, reason: null }],
        snapshotTodoIds: ["t1"],
      }),
    ];
    await openC1();
    const chip = await screen.findByTestId("todo-snapshot");
    expect(chip.tagName).toBe("SPAN");
    expect(screen.getByTestId("plan-owner")).toHaveTextContent("(running)");
  });
});
