import { mockIPC } from "@tauri-apps/api/mocks";
import { describe, expect, it } from "vitest";
import { commands } from "./bindings";

type Received = { cmd: string; args: unknown };

function record(reply: unknown = "reply") {
  const received: Received[] = [];
  mockIPC((cmd, args) => {
    received.push({ cmd, args });
    return reply;
  });
  return received;
}

describe("bindings.commands", () => {
  it.each([
    ["conversationList", () => commands.conversationList(), "conversation_list", {}],
    ["conversationCreate", () => commands.conversationCreate("Plan"), "conversation_create", { title: "Plan" }],
    [
      "conversationRename",
      () => commands.conversationRename("c-1", "New name"),
      "conversation_rename",
      { id: "c-1", title: "New name" },
    ],
    ["conversationDelete", () => commands.conversationDelete("c-2"), "conversation_delete", { id: "c-2" }],
    ["conversationRestore", () => commands.conversationRestore("c-3"), "conversation_restore", { id: "c-3" }],
    [
      "messagePage",
      () => commands.messagePage("c-4", { kind: "before", seq: 17 }, 200),
      "message_page",
      { conversationId: "c-4", at: { kind: "before", seq: 17 }, limit: 200 },
    ],
    [
      "runStart",
      () => commands.runStart("c-5", "count", 12, null as never),
      "run_start",
      { conversationId: "c-5", task: "count", rewindFrom: 12, onEvent: null },
    ],
  ] as const)("%s invokes %s with the right argument keys", async (_name, run, cmd, args) => {
    const received = record({ some: "data" });
    const result = await run();
    expect(received).toEqual([{ cmd, args }]);
    expect(result).toEqual({ status: "ok", data: { some: "data" } });
  });

  it("turns a rejected invoke carrying an AppError into an error result", async () => {
    mockIPC(() => {
      throw { code: "not_found", message: "no such conversation" };
    });
    await expect(commands.conversationRename("x", "y")).resolves.toEqual({
      status: "error",
      error: { code: "not_found", message: "no such conversation" },
    });
  });

  it("re-throws JavaScript Errors instead of wrapping them", async () => {
    mockIPC(() => {
      throw new Error("bridge down");
    });
    await expect(commands.conversationList()).rejects.toThrow("bridge down");
  });
});
