import { describe, expect, it } from "vitest";
import { planChange } from "./planChange";

const plan = (...todos: { id?: string; title: string; status: string }[]) => JSON.stringify({ todos });

describe("what a todo_write changed in the plan", () => {
  it("reads a first plan as added, with the todo it starts", () => {
    const first = plan({ title: "Load the CSV", status: "in_progress" }, { title: "Clean columns", status: "pending" });
    expect(planChange(null, first)).toEqual([
      { kind: "added", titles: ["Load the CSV", "Clean columns"] },
      { kind: "started", titles: ["Load the CSV"] },
    ]);
  });

  it("says what was added, done, started and removed since the plan before, in that order", () => {
    const before = plan(
      { title: "Clean columns", status: "in_progress" },
      { title: "Fit the model", status: "pending" },
      { title: "Email the CFO", status: "pending" },
    );
    const after = plan(
      { id: "t-1", title: "Clean columns", status: "completed" },
      { id: "t-2", title: "Fit the model", status: "in_progress" },
      { title: "Load the CSV", status: "pending" },
    );
    expect(planChange(before, after)).toEqual([
      { kind: "added", titles: ["Load the CSV"] },
      { kind: "started", titles: ["Fit the model"] },
      { kind: "done", titles: ["Clean columns"] },
      { kind: "removed", titles: ["Email the CFO"] },
    ]);
  });

  it("follows a todo by its id when it is renamed, and names failed, skipped and reopened ones", () => {
    const before = plan(
      { id: "a", title: "Fit a model", status: "in_progress" },
      { id: "b", title: "Plot it", status: "pending" },
      { id: "c", title: "Check outliers", status: "completed" },
    );
    const after = plan(
      { id: "a", title: "Fit a log model", status: "failed" },
      { id: "b", title: "Plot it", status: "skipped" },
      { id: "c", title: "Check outliers", status: "pending" },
    );
    expect(planChange(before, after)).toEqual([
      { kind: "failed", titles: ["Fit a log model"] },
      { kind: "skipped", titles: ["Plot it"] },
      { kind: "reopened", titles: ["Check outliers"] },
      { kind: "renamed", titles: ["Fit a model → Fit a log model"] },
    ]);
  });

  it("matches two todos of one title one to one, and says when nothing changed", () => {
    const twice = plan({ title: "Check", status: "pending" }, { title: "Check", status: "pending" });
    expect(planChange(twice, twice)).toEqual([]);
    expect(planChange(twice, plan({ title: "Check", status: "completed" }))).toEqual([
      { kind: "done", titles: ["Check"] },
      { kind: "removed", titles: ["Check"] },
    ]);
  });

  it("is nothing for arguments that are not a plan, and reads a broken plan before as none", () => {
    expect(planChange(null, "{not json")).toBeNull();
    expect(planChange(null, '{"todo": []}')).toBeNull();
    expect(planChange("{not json", plan({ title: "A", status: "pending" }))).toEqual([{ kind: "added", titles: ["A"] }]);
  });
});
