/** What a tool call does, in one line: the tool and the argument a person reads first. */
export type ToolLine = { name: string; detail: string };

/** Longest detail shown; the whole call is one click away. */
const DETAIL_CHARS = 140;

/** How a todo list reads in a line: "3 todos, 1 in progress". */
export type TodoCounter = (total: number, inProgress: number) => string;

/**
 * One readable line for a call: `shell: duckdb -c 'select …'`, `read_file: /data/a.csv`,
 * `todo_write: 3 todos, 1 in progress`, `spawn_subagent: check the Q3 totals`. Arguments that are
 * not JSON, or a tool this does not know, show their first text value or the raw text, cut.
 */
export function toolLine(name: string, argumentsText: string, todos: TodoCounter): ToolLine {
  let args: unknown;
  try {
    args = JSON.parse(argumentsText);
  } catch {
    return { name, detail: cut(oneLine(argumentsText)) };
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return { name, detail: cut(oneLine(argumentsText)) };
  }
  const record = args as Record<string, unknown>;
  if (Array.isArray(record.todos)) {
    const items = record.todos as { status?: unknown }[];
    const running = items.filter((t) => t && t.status === "in_progress").length;
    return { name, detail: todos(items.length, running) };
  }
  for (const key of ["command", "cmd", "path", "task", "question", "pattern", "query", "url"]) {
    const value = record[key];
    if (typeof value === "string" && value.trim() !== "") return { name, detail: cut(oneLine(value)) };
  }
  const first = Object.values(record).find((v) => typeof v === "string" && v.trim() !== "");
  if (typeof first === "string") return { name, detail: cut(oneLine(first)) };
  const compact = JSON.stringify(args);
  return { name, detail: compact === "{}" ? "" : cut(compact) };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function cut(text: string): string {
  return text.length > DETAIL_CHARS ? `${text.slice(0, DETAIL_CHARS)}…` : text;
}

/** A tool's result is short enough to show in full: a few lines, a few hundred characters. */
export function isShortResult(text: string): boolean {
  if (text.length > 400) return false;
  let lines = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < text.length - 1; i = text.indexOf("\n", i + 1)) lines += 1;
  return lines <= 4;
}
