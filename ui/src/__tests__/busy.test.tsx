import { act, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ConversationBusy } from "../bindings";
import { BUSY_POLL_MS } from "../hooks/useConversationBusy";
import { setLanguage } from "../i18n";
import { formatClock } from "../lib/busy";
import { backendWith, openC1, startRun } from "../test/conversation";

const SINCE = "2026-03-01T14:02:00Z";

function busy(kind: string, overrides: Partial<ConversationBusy> = {}): ConversationBusy {
  return {
    kind,
    executionId: kind === "running" || kind === "awaiting_user" ? "e7" : null,
    since: SINCE,
    expiresAt: null,
    message: `conversation c1 is busy: ${kind}`,
    ...overrides,
  };
}

/** The reason the composer gives for a disabled Send, checked to be what describes the button. */
function sendDisabledBecause(): string {
  const send = screen.getByTestId("send");
  expect(send).toBeDisabled();
  const reason = screen.getByTestId("composer-busy");
  expect(send).toHaveAttribute("aria-describedby", reason.id);
  expect(send).toHaveAccessibleDescription(reason.textContent ?? "");
  return reason.textContent ?? "";
}

/** Lets the periodic check run once more. */
async function nextCheck() {
  await act(async () => {
    await vi.advanceTimersByTimeAsync(BUSY_POLL_MS);
  });
}

const ENGLISH: [string, string][] = [
  ["running", `A run is working in this conversation (started ${formatClock(SINCE, "en")}). Wait for it or stop it.`],
  ["awaiting_user", "A run waits for your choice on a failure: answer it in the recovery panel."],
  ["chat", "A chat turn is answering."],
  ["compression", "A compression is running."],
];

const CHINESE: [string, string][] = [
  ["running", `此对话中有一个运行正在工作（开始于 ${formatClock(SINCE, "zh")}）。请等待它结束或停止它。`],
  ["awaiting_user", "一个运行正在等待你对故障的选择：请在故障恢复面板中回答。"],
  ["chat", "一轮聊天正在回答。"],
  ["compression", "正在压缩上下文。"],
];

beforeEach(async () => {
  await setLanguage("en");
});

afterEach(() => {
  vi.useRealTimers();
});

describe("a busy conversation", () => {
  it.each(ENGLISH)("disables Send while %s, and says why", async (kind, reason) => {
    const backend = backendWith({ busy: { c1: busy(kind) } });
    const { user } = await openC1();
    await waitFor(() => expect(screen.getByTestId("composer-busy")).toBeInTheDocument());
    await user.type(screen.getByRole("textbox", { name: "Task" }), "count them");
    expect(sendDisabledBecause()).toBe(reason);
    await user.keyboard("{Control>}{Enter}{/Control}");
    expect(backend.callsOf("run_start")).toHaveLength(0);
    expect(backend.callsOf("conversation_busy")[0]?.args).toEqual({ id: "c1" });
  });

  it.each(CHINESE)("says why in Chinese while %s", async (kind, reason) => {
    backendWith({ busy: { c1: busy(kind) } });
    const { user } = await openC1();
    await user.click(screen.getByRole("button", { name: "中文" }));
    await waitFor(() => expect(screen.getByTestId("composer-busy")).toHaveTextContent(reason));
    expect(sendDisabledBecause()).toBe(reason);
  });

  it("words a kind it does not know with the runtime's message", async () => {
    backendWith({ busy: { c1: busy("import", { message: "an import is writing" }) } });
    await openC1();
    await waitFor(() => expect(screen.getByTestId("composer-busy")).toHaveTextContent("This conversation is busy: an import is writing"));
  });

  it("notices a run started elsewhere (the CLI) and enables Send again once the conversation is free", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const backend = backendWith();
    const { user } = await openC1();
    await user.type(screen.getByRole("textbox", { name: "Task" }), "count them");
    expect(screen.getByTestId("send")).toBeEnabled();
    expect(screen.queryByTestId("composer-busy")).toBeNull();

    backend.busy.c1 = busy("running");
    await nextCheck();
    await waitFor(() => expect(screen.getByTestId("send")).toBeDisabled());
    expect(sendDisabledBecause()).toMatch(/^A run is working in this conversation/);

    backend.busy.c1 = null;
    await nextCheck();
    await waitFor(() => expect(screen.getByTestId("send")).toBeEnabled());
    expect(screen.queryByTestId("composer-busy")).toBeNull();
    expect(screen.getByTestId("send")).not.toHaveAttribute("aria-describedby");
  });

  it("shows the same reason when run_start refuses a busy conversation", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    await user.type(screen.getByRole("textbox", { name: "Task" }), "count them");
    // Another process took it between two checks.
    backend.busy.c1 = busy("chat");
    await user.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(backend.callsOf("run_start")).toHaveLength(1));
    await waitFor(() => expect(sendDisabledBecause()).toBe("A chat turn is answering."));
    expect(screen.queryByTestId("error-banner")).toBeNull();
    // The task is kept for later.
    expect(screen.getByRole("textbox", { name: "Task" })).toHaveValue("count them");
  });

  it("keeps Stop for this window's own live run, and checks again when it ends", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const backend = backendWith();
    const { user } = await openC1();
    await startRun(backend, user);
    // The store says the conversation is busy with this very run: the composer keeps its Stop.
    backend.busy.c1 = busy("running");
    const checks = backend.callsOf("conversation_busy").length;
    await nextCheck();
    await nextCheck();
    expect(backend.callsOf("conversation_busy")).toHaveLength(checks);
    expect(screen.getByRole("button", { name: "Stop" })).toBeEnabled();
    expect(screen.queryByTestId("composer-busy")).toBeNull();

    backend.busy.c1 = null;
    act(() => backend.end({ status: "succeeded", answer: "done", error: null }));
    await waitFor(() => expect(backend.callsOf("conversation_busy").length).toBeGreaterThan(checks));
    expect(screen.getByRole("button", { name: "Send" })).toBeInTheDocument();
    expect(screen.queryByTestId("composer-busy")).toBeNull();
  });
});
