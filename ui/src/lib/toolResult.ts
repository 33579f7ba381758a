/** The tool that starts a subagent; its result is the subagent's answer. */
export const SPAWN_SUBAGENT = "spawn_subagent";

/** The tool that replaces the run's plan; its arguments are the whole new plan. */
export const TODO_WRITE = "todo_write";

/** Whether a stored result is the runtime's word that the call failed (`[tool error: data] …`):
 *  such a result is shown as it is, never read as a plan or an answer. */
export function isToolError(content: string): boolean {
  return content.startsWith("[tool error");
}

/** How many lines a text has (a final newline starts none). */
export function lineCount(text: string): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < text.length - 1; i = text.indexOf("\n", i + 1)) n += 1;
  return n;
}

/** Longest line a folded output shows of its head; the whole line is one click away. */
const HEAD_LINE_CHARS = 160;

/**
 * The first `count` lines of a long output, from its first non-blank one, each cut to a
 * summary's width: what a folded result shows so the reader sees what it starts with.
 */
export function headLines(text: string, count: number): string {
  const lines = text.split("\n");
  const first = lines.findIndex((l) => l.trim() !== "");
  if (first < 0) return "";
  return lines
    .slice(first, first + count)
    .map((l) => (l.length > HEAD_LINE_CHARS ? `${l.slice(0, HEAD_LINE_CHARS)}…` : l))
    .join("\n")
    .trimEnd();
}

/** The task a `spawn_subagent` call gave its subagent, or null when its arguments hold none. */
export function subagentTask(argumentsText: string): string | null {
  let args: unknown;
  try {
    args = JSON.parse(argumentsText);
  } catch {
    return null;
  }
  if (typeof args !== "object" || args === null) return null;
  const task = (args as { task?: unknown }).task;
  return typeof task === "string" && task.trim() !== "" ? task.trim() : null;
}

/** The runtime's first line on a subagent's answer: `[subagent <execution id> answered]`. */
const ANSWERED = /^\[subagent ([^\]\s]+) answered\]\n?/;

/**
 * A subagent's answer as its parent's call stored it, without the runtime's header line: the
 * subagent's id is bookkeeping (kept for a tooltip), its answer is what the reader wants.
 * A result without the header (a refusal, a failure) is returned whole with no id.
 */
export function subagentAnswer(content: string): { id: string | null; answer: string } {
  const head = ANSWERED.exec(content);
  if (!head) return { id: null, answer: content };
  return { id: head[1] ?? null, answer: content.slice(head[0].length) };
}
