// The run's final tenth-man review: the status line says so while it reads the answer, Skip
// ends it, and what the runtime warns about it is said in the window's words, never with a
// command-line flag.
import { act, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import type { RunEvent } from "../bindings";
import { setLanguage } from "../i18n";
import { warningText } from "../lib/runWarning";
import i18n from "../i18n";
import { backendWith, openC1, startRun } from "../test/conversation";
import type { FakeBackend } from "../test/fakeBackend";

beforeEach(async () => {
  await setLanguage("en");
});

const REVIEWER_FAILED =
  "the final tenth-man review failed: the reviewer (local) answered with an invalid review twice (missing field `risk_level`); " +
  "nothing was stored. Try again, or review with another provider";

function emit(backend: FakeBackend, ...events: RunEvent[]) {
  act(() => {
    for (const event of events) backend.emit(event);
  });
}

/** A run in C1 that has answered: its answer is stored and its calls are done. */
async function answered() {
  const backend = backendWith();
  const { user } = await openC1();
  await startRun(backend, user);
  emit(
    backend,
    { type: "execution_started", execution_id: "e1", conversation_id: "c1", workspace: "/ws", how: "run" },
    { type: "tool_started", call_id: "k1", name: "shell", arguments: '{"command":"rm -rf out"}' },
  );
  return { backend, user };
}

describe("the final review", () => {
  it("is not the review before a risky call, which the call's card shows", async () => {
    const { backend } = await answered();
    emit(backend, { type: "review_started", conversation_id: "c1", execution_id: "e1", trigger: "system", mode: "full_history", review_type: "full" });
    expect(screen.queryByTestId("live-reviewing")).toBeNull();
    expect(screen.queryByTestId("skip-review")).toBeNull();
    emit(backend, { type: "review_finished", review_id: "r0", risk_level: "low", findings: 0, contested: false, cached: false });
    emit(backend, { type: "tool_finished", call_id: "k1", name: "shell", exit_code: 0, duration_ms: 5, class: null, ran: true, images: 0 });
    // A review the agent asked for through its tool is not the final one either.
    emit(backend, { type: "review_started", conversation_id: "c1", execution_id: "e1", trigger: "tool", mode: "full_history", review_type: "full" });
    expect(screen.queryByTestId("live-reviewing")).toBeNull();
    expect(screen.getByTestId("live-text")).toHaveTextContent("Working…");
  });

  it("says it is reviewing the answer, and Skip asks the runtime to skip that execution's review", async () => {
    const { backend, user } = await answered();
    emit(
      backend,
      { type: "tool_finished", call_id: "k1", name: "shell", exit_code: 0, duration_ms: 5, class: null, ran: true, images: 0 },
      { type: "text_delta", text: "There are 3 invoices." },
      { type: "message_stored", seq: 3, role: "assistant" },
      { type: "review_started", conversation_id: "c1", execution_id: "e1", trigger: "system", mode: "full_history", review_type: "full" },
    );
    const line = screen.getByTestId("live-text");
    expect(line).toHaveAttribute("data-state", "reviewing");
    expect(line).toHaveTextContent("Reviewing the answer…");
    expect(line).not.toHaveTextContent("Working…");

    await user.click(within(line).getByRole("button", { name: "Skip" }));
    await waitFor(() => expect(backend.callsOf("run_skip_review")).toEqual([{ cmd: "run_skip_review", args: { executionId: "e1" } }]));

    emit(backend, { type: "warning", message: "the final tenth-man review was skipped: the answer stands, unreviewed" });
    expect(screen.queryByTestId("live-reviewing")).toBeNull();
    expect(screen.getByTestId("run-warning")).toHaveTextContent("You skipped the final tenth-man review: the answer stands, unreviewed.");
    emit(backend, { type: "finished", execution_id: "e1", status: "succeeded" });
    act(() => backend.end({ status: "succeeded", answer: "There are 3 invoices.", error: null }));
    expect(screen.queryByTestId("skip-review")).toBeNull();
    expect(screen.queryByTestId("live-text")).toBeNull();
  });

  it("ends the status line when the review finishes, and says it in Chinese", async () => {
    const { backend } = await answered();
    await act(() => setLanguage("zh"));
    emit(
      backend,
      { type: "tool_finished", call_id: "k1", name: "shell", exit_code: 0, duration_ms: 5, class: null, ran: true, images: 0 },
      { type: "review_started", conversation_id: "c1", execution_id: "e1", trigger: "system", mode: "full_history", review_type: "full" },
    );
    expect(screen.getByTestId("live-text")).toHaveTextContent("正在审查答案…");
    expect(screen.getByTestId("skip-review")).toHaveTextContent("跳过");
    emit(backend, { type: "review_finished", review_id: "r1", risk_level: "low", findings: 0, contested: false, cached: false });
    expect(screen.queryByTestId("live-reviewing")).toBeNull();
    expect(screen.getByTestId("live-text")).toHaveTextContent("处理中…");
    await act(() => setLanguage("en"));
  });

  it("says a failed final review without the command line's flag", async () => {
    const { backend } = await answered();
    emit(
      backend,
      { type: "tool_finished", call_id: "k1", name: "shell", exit_code: 0, duration_ms: 5, class: null, ran: true, images: 0 },
      { type: "review_started", conversation_id: "c1", execution_id: "e1", trigger: "system", mode: "full_history", review_type: "full" },
      { type: "warning", message: REVIEWER_FAILED },
    );
    const warning = screen.getByTestId("run-warning");
    expect(warning).toHaveTextContent(
      "The final tenth-man review failed, so the answer stands unreviewed: the reviewer (local) answered with an invalid review twice (missing field `risk_level`); nothing was stored. Try again, or choose another provider for the tenth man in Settings.",
    );
    expect(warning.textContent).not.toMatch(/--[a-z]/);
    expect(screen.queryByTestId("live-reviewing")).toBeNull();
  });

  it("says the review dialog's failure without the flag too", async () => {
    const backend = backendWith();
    backend.fail("review_run", { code: "provider", message: REVIEWER_FAILED.replace("the final tenth-man review failed: ", "") });
    const { user } = await openC1();
    await user.click(screen.getByTestId("tenth-man-review-button"));
    await user.click(await screen.findByTestId("review-start"));
    const error = await screen.findByTestId("review-error");
    expect(error).toHaveTextContent("Try again, or choose another provider for the tenth man in Settings.");
    expect(error.textContent).not.toMatch(/--[a-z]/);
  });

  it("words the runtime's warnings about the final review in both languages, and leaves others as they came", async () => {
    expect(warningText(i18n.t, "the final tenth-man review was cancelled: the answer stands, unreviewed")).toBe(
      "The final tenth-man review was stopped: the answer stands, unreviewed.",
    );
    expect(warningText(i18n.t, "the MCP server x did not answer")).toBe("the MCP server x did not answer");
    await setLanguage("zh");
    expect(warningText(i18n.t, "the final tenth-man review was skipped: the answer stands, unreviewed")).toBe(
      "你跳过了最终的第十人审查：答案保留，未经审查。",
    );
    expect(warningText(i18n.t, REVIEWER_FAILED)).toContain("请重试，或在设置中为第十人选择另一个服务。");
    expect(warningText(i18n.t, REVIEWER_FAILED)).not.toContain("review with another provider");
    await setLanguage("en");
  });
});
