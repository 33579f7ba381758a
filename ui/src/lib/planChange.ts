/** What happened to some todos between two plans, in the order a reader takes them in. */
export type PlanChangeKind = "added" | "started" | "done" | "failed" | "skipped" | "reopened" | "renamed" | "removed";

/** One kind of change and the todos it touched (a rename reads `old → new`). */
export type PlanChange = { kind: PlanChangeKind; titles: string[] };

const ORDER: readonly PlanChangeKind[] = ["added", "started", "done", "failed", "skipped", "reopened", "renamed", "removed"];

/** A todo as a `todo_write` call sends it: its id is the store's, or one the model made up. */
type SentTodo = { id: string | null; title: string; status: string };

/** The todos of `todo_write` arguments, or null when they are not `{"todos": [...]}`. */
function todosOf(argumentsText: string): SentTodo[] | null {
  let args: unknown;
  try {
    args = JSON.parse(argumentsText);
  } catch {
    return null;
  }
  if (typeof args !== "object" || args === null || !Array.isArray((args as { todos?: unknown }).todos)) return null;
  const todos: SentTodo[] = [];
  for (const item of (args as { todos: unknown[] }).todos) {
    if (typeof item !== "object" || item === null) continue;
    const { id, title, status } = item as { id?: unknown; title?: unknown; status?: unknown };
    if (typeof title !== "string" || title.trim() === "") continue;
    todos.push({
      id: typeof id === "string" && id !== "" ? id : null,
      title: title.trim(),
      status: typeof status === "string" ? status : "pending",
    });
  }
  return todos;
}

/** The kind of change a todo's new status is, when it is not where the todo was. */
function statusChange(status: string): PlanChangeKind | null {
  switch (status) {
    case "in_progress":
      return "started";
    case "completed":
      return "done";
    case "failed":
      return "failed";
    case "skipped":
      return "skipped";
    case "pending":
      return "reopened";
    default:
      return null;
  }
}

/**
 * What a `todo_write` call changed in the plan, from the arguments of the call before it
 * (`before`, null when there was none) to its own (`after`): the todos added, started, done,
 * failed, skipped, reopened, renamed and removed, in words rather than the whole plan with its
 * ids. A todo is the same one when it keeps its id, else when it keeps its title (the runtime
 * matches them the same way). An empty list: nothing changed. Null: `after` is not a plan.
 */
export function planChange(before: string | null, after: string): PlanChange[] | null {
  const next = todosOf(after);
  if (next === null) return null;
  const previous = (before === null ? null : todosOf(before)) ?? [];
  const unmatched = new Set(previous);
  const found = new Map<SentTodo, SentTodo>();
  // Ids first, so a todo renamed under its id is not taken for another of its old title.
  for (const todo of next) {
    const same = todo.id === null ? undefined : [...unmatched].find((p) => p.id === todo.id);
    if (same) {
      found.set(todo, same);
      unmatched.delete(same);
    }
  }
  for (const todo of next) {
    if (found.has(todo)) continue;
    const same = [...unmatched].find((p) => p.title === todo.title);
    if (same) {
      found.set(todo, same);
      unmatched.delete(same);
    }
  }

  const groups = new Map<PlanChangeKind, string[]>();
  const note = (kind: PlanChangeKind, title: string) => groups.set(kind, [...(groups.get(kind) ?? []), title]);
  for (const todo of next) {
    const was = found.get(todo);
    if (!was) {
      note("added", todo.title);
      const kind = statusChange(todo.status);
      if (kind !== null && kind !== "reopened") note(kind, todo.title);
      continue;
    }
    if (was.title !== todo.title) note("renamed", `${was.title} → ${todo.title}`);
    if (was.status !== todo.status) {
      const kind = statusChange(todo.status);
      if (kind !== null) note(kind, todo.title);
    }
  }
  for (const gone of unmatched) note("removed", gone.title);
  return ORDER.flatMap((kind) => {
    const titles = groups.get(kind);
    return titles ? [{ kind, titles }] : [];
  });
}
