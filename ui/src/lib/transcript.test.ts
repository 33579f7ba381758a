import { describe, expect, it } from "vitest";
import type { MessageView, ToolCallView } from "../bindings";
import { message } from "../test/fixtures";
import { callKey, pairResults, plansBefore } from "./transcript";

const call = (id: string, name = "shell", args = "{}"): ToolCallView => ({ id, name, arguments: args });
const asks = (seq: number, ...calls: ToolCallView[]) => message({ id: `a${seq}`, seq, role: "assistant", toolCalls: calls });
const answers = (seq: number, callId: string, content = `out ${seq}`) => message({ id: `t${seq}`, seq, role: "tool", toolCallId: callId, content });

/** Each result's call as `assistant id#index`. */
function placesOf(messages: MessageView[]): Record<string, string> {
  return Object.fromEntries([...pairResults(messages)].map(([id, p]) => [id, callKey(p.message, p.index)]));
}

describe("which call a tool result answers", () => {
  it("is the nearest call of its id not answered yet, though servers reuse ids at every step", () => {
    const messages = [asks(1, call("call_0"), call("call_1")), answers(2, "call_0"), answers(3, "call_1"), asks(4, call("call_0")), answers(5, "call_0")];
    expect(placesOf(messages)).toEqual({ t2: "a1#0", t3: "a1#1", t5: "a4#0" });
  });

  it("takes a message's calls of one id in order, and skips an older call left unanswered", () => {
    const messages = [asks(1, call("x")), asks(2, call("x"), call("x")), answers(3, "x"), answers(4, "x"), answers(5, "x")];
    // The step at 1 was never answered until the step at 2 was: the third result goes to it.
    expect(placesOf(messages)).toEqual({ t3: "a2#0", t4: "a2#1", t5: "a1#0" });
  });

  it("has none for a result whose call is not loaded", () => {
    expect(placesOf([answers(7, "call_9"), asks(8, call("call_9"))])).toEqual({});
  });
});

describe("the plan a todo_write replaced", () => {
  const plan = (title: string) => JSON.stringify({ todos: [{ title, status: "pending" }] });

  it("is the loaded todo_write before it, none for the first", () => {
    const messages = [asks(1, call("c", "todo_write", plan("A"))), answers(2, "c"), asks(3, call("s"), call("c", "todo_write", plan("B")))];
    const before = plansBefore(messages, pairResults(messages));
    expect(before.get("a1#0")).toBeNull();
    expect(before.get("a3#1")).toBe(plan("A"));
    expect(before.has("a3#0")).toBe(false);
  });

  it("skips a call the runtime refused: it changed nothing", () => {
    const messages = [
      asks(1, call("c", "todo_write", plan("A"))),
      answers(2, "c"),
      asks(3, call("c", "todo_write", "{not json")),
      answers(4, "c", "[tool error: data] the arguments of this todo_write call are not valid JSON"),
      asks(5, call("c", "todo_write", plan("B"))),
    ];
    const before = plansBefore(messages, pairResults(messages));
    expect(before.get("a3#0")).toBe(plan("A"));
    expect(before.get("a5#0")).toBe(plan("A"));
  });
});
