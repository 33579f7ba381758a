import { describe, expect, it } from "vitest";
import { headLines, isToolError, lineCount, subagentAnswer, subagentTask } from "./toolResult";

describe("a tool result's text", () => {
  it("shows a long output's first lines from its first non-blank one, long lines cut", () => {
    expect(headLines("\n\nrow 1\nrow 2\nrow 3\nrow 4", 3)).toBe("row 1\nrow 2\nrow 3");
    expect(headLines("only\n", 3)).toBe("only");
    expect(headLines(`${"x".repeat(200)}\nnext`, 1)).toBe(`${"x".repeat(160)}…`);
    expect(headLines("  \n \n", 3)).toBe("");
  });

  it("counts lines, a final newline starting none", () => {
    expect(lineCount("a")).toBe(1);
    expect(lineCount("a\nb\n")).toBe(2);
    expect(lineCount("a\n\nb")).toBe(3);
  });

  it("knows the runtime's word that a call failed", () => {
    expect(isToolError("[tool error: data] todo 2 has an empty title")).toBe(true);
    expect(isToolError("The plan now:\n- [pending] A (id 1)")).toBe(false);
  });

  it("reads a subagent's task from its call and its answer without the runtime's header", () => {
    expect(subagentTask('{"task":"  Check the Q3 totals ","sandbox":"host"}')).toBe("Check the Q3 totals");
    expect(subagentTask('{"sandbox":"host"}')).toBeNull();
    expect(subagentTask("{not json")).toBeNull();
    expect(subagentAnswer("[subagent 0193-ab answered]\nThe totals **match**.")).toEqual({ id: "0193-ab", answer: "The totals **match**." });
    const refused = "[tool error: data] spawn_subagent refused: this execution has already spawned 3 subagents";
    expect(subagentAnswer(refused)).toEqual({ id: null, answer: refused });
  });
});
