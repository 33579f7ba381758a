import { act, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { end, idle, reduce } from "../run/state";
import { backendWith, openC1, startRun } from "../test/conversation";

const asked = {
  type: "approval_asked",
  call_id: "call_1",
  server: "db",
  tool: "drop_table",
  arguments: '{"table":"ledger_2025"}',
  read_only: null,
  destructive: true,
} as const;

beforeEach(async () => {
  await setLanguage("en");
});

describe("an MCP call waiting for approval", () => {
  it("is held in the run's state until its call finishes or the run ends", () => {
    const waiting = reduce({ ...idle, live: true }, asked);
    expect(waiting.approval).toMatchObject({ callId: "call_1", server: "db", tool: "drop_table", destructive: true });
    const other = reduce(waiting, {
      type: "tool_finished",
      call_id: "call_0",
      name: "shell",
      exit_code: 0,
      duration_ms: 3,
      class: null,
      ran: true,
      images: 0,
    });
    expect(other.approval).not.toBeNull();
    const done = reduce(waiting, {
      type: "tool_finished",
      call_id: "call_1",
      name: "mcp__db__drop_table",
      exit_code: null,
      duration_ms: 1,
      class: "permission",
      ran: true,
      images: 0,
    });
    expect(done.approval).toBeNull();
    expect(end(waiting, { status: "cancelled", answer: null, error: null }).approval).toBeNull();
  });

  it("is asked in the run's view with the server's claim, and the answer goes to the run", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    await startRun(backend, user);
    act(() =>
      backend.emit({ type: "tool_started", call_id: "call_1", name: "mcp__db__drop_table", arguments: asked.arguments }),
    );
    act(() => backend.emit(asked));
    const prompt = await screen.findByRole("group", { name: "Approval of an MCP call" });
    expect(screen.getByTestId("live-tool-state")).toHaveTextContent("waiting for your approval");
    expect(prompt).toHaveTextContent("db wants to run drop_table");
    expect(prompt).toHaveTextContent("The server says this tool may destroy data.");
    expect(prompt).toHaveTextContent('"table": "ledger_2025"');
    const once = within(prompt).getByRole("button", { name: "Allow once" });
    expect(once).toHaveFocus();
    await user.click(within(prompt).getByRole("button", { name: "Allow in this conversation" }));
    await waitFor(() =>
      expect(backend.callsOf("run_approve")).toEqual([{ cmd: "run_approve", args: { runId: "run-1", answer: "conversation" } }]),
    );
    await waitFor(() => expect(screen.queryByRole("group", { name: "Approval of an MCP call" })).toBeNull());
  });

  it("speaks Chinese in the Chinese window", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    await startRun(backend, user);
    await act(() => setLanguage("zh"));
    act(() => backend.emit({ ...asked, destructive: null, read_only: true }));
    const prompt = await screen.findByRole("group", { name: "批准 MCP 调用" });
    expect(prompt).toHaveTextContent("db 想运行 drop_table");
    expect(prompt).toHaveTextContent("服务器称此工具只读取数据");
    expect(within(prompt).getByRole("button", { name: "拒绝" })).toBeInTheDocument();
  });
});
