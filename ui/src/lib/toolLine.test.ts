import { describe, expect, it } from "vitest";
import { isShortResult, toolLine } from "./toolLine";

const todos = (total: number, running: number) => `${total} todos, ${running} in progress`;

describe("a tool call in one line", () => {
  it("shows the argument a person reads first", () => {
    expect(toolLine("shell", JSON.stringify({ command: "duckdb -c 'select count(*)\n from t'" }), todos)).toEqual({
      name: "shell",
      detail: "duckdb -c 'select count(*) from t'",
    });
    expect(toolLine("read_file", '{"path":"/workspace/a.csv"}', todos).detail).toBe("/workspace/a.csv");
    expect(toolLine("spawn_subagent", '{"task":"Check the Q3 totals","brief":"x"}', todos).detail).toBe("Check the Q3 totals");
  });

  it("counts a plan instead of listing it", () => {
    const args = { todos: [{ title: "a", status: "completed" }, { title: "b", status: "in_progress" }, { title: "c", status: "pending" }] };
    expect(toolLine("todo_write", JSON.stringify(args), todos).detail).toBe("3 todos, 1 in progress");
  });

  it("cuts long values and keeps what is not JSON as sent", () => {
    const long = toolLine("shell", JSON.stringify({ command: "x".repeat(500) }), todos).detail;
    expect(long.length).toBe(141);
    expect(long.endsWith("…")).toBe(true);
    expect(toolLine("shell", "{not json", todos).detail).toBe("{not json");
    expect(toolLine("noop", "{}", todos).detail).toBe("");
    expect(toolLine("odd", '{"n":3}', todos).detail).toBe('{"n":3}');
  });

  it("tells a short result from a long one", () => {
    expect(isShortResult("exit_code=0\n42 rows")).toBe(true);
    expect(isShortResult("a\nb\nc\nd\ne")).toBe(false);
    expect(isShortResult("x".repeat(401))).toBe(false);
  });
});
