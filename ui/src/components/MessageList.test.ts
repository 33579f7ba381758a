import { describe, expect, it } from "vitest";
import type { CompactionMarker, ToolCallView } from "../bindings";
import { message } from "../test/fixtures";
import { rowsOf } from "./MessageList";

const call = (id: string, name = "shell", args = "{}"): ToolCallView => ({ id, name, arguments: args });
const asks = (seq: number, ...calls: ToolCallView[]) => message({ id: `a${seq}`, seq, role: "assistant", toolCalls: calls });
const answers = (seq: number, callId: string) => message({ id: `t${seq}`, seq, role: "tool", toolCallId: callId, content: `out ${seq}` });

/** Each row as its kind and seq, a message row with the seqs of the results on its cards. */
function shape(rows: ReturnType<typeof rowsOf>): string[] {
  return rows.map((r) =>
    r.kind === "message" ? `${r.message.seq}${r.results.some((x) => x) ? `[${r.results.map((x) => x?.seq ?? "-").join(",")}]` : ""}` : r.kind,
  );
}

const marker = (endSeq: number): CompactionMarker => ({
  id: `k${endSeq}`,
  level: "standard",
  trigger: "manual",
  strategy: "extract",
  tokensBefore: 10,
  tokensAfter: 5,
  startSeq: 1,
  endSeq,
  undoable: false,
  createdAt: "2026-01-01T10:00:00Z",
});

describe("the list's rows", () => {
  it("put each result on its call's card, not in a row of its own", () => {
    const rows = rowsOf([message({ id: "u1", seq: 1 }), asks(2, call("call_0"), call("call_1"), call("call_2")), answers(3, "call_1"), answers(4, "call_0"), asks(5, call("call_0")), answers(6, "call_0")], []);
    expect(shape(rows)).toEqual(["1", "2[4,3,-]", "5[6]"]);
  });

  it("keep a row for a result whose call is not loaded or that a message stands apart from", () => {
    // The page starts at the result; a user's message stands between the next call and its result.
    const rows = rowsOf([answers(10, "call_0"), asks(11, call("call_1")), message({ id: "u12", seq: 12 }), answers(13, "call_1")], []);
    expect(shape(rows)).toEqual(["10", "11", "12", "13"]);
  });

  it("keep a result apart from its call when a compaction's marker or a run's end stands between", () => {
    const split = [asks(1, call("c")), answers(2, "c")];
    expect(shape(rowsOf(split, [marker(1)]))).toEqual(["1", "marker", "2"]);
    expect(shape(rowsOf(split, [], [{ executionId: "e", ending: { by: "stop", step: 1, afterSeq: 1 } }]))).toEqual(["1", "ended", "2"]);
    expect(shape(rowsOf(split, [marker(2)]))).toEqual(["1[2]"]);
  });

  it("give each todo_write call the plan of the one before it", () => {
    const plan = (title: string) => JSON.stringify({ todos: [{ title, status: "pending" }] });
    const rows = rowsOf([asks(1, call("p", "todo_write", plan("A"))), answers(2, "p"), asks(3, call("s"), call("p", "todo_write", plan("B")))], []);
    const [first, second] = rows.flatMap((r) => (r.kind === "message" ? [r.plansBefore] : []));
    expect(first).toEqual([null]);
    expect(second).toEqual([null, plan("A")]);
  });
});
