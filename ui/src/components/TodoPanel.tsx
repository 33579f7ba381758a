import { useTranslation } from "react-i18next";
import type { RunEndingView, TodoItem, TodoStatus } from "../bindings";
import { todoStatusLabel } from "../lib/labels";
import { endedText } from "../lib/runEnding";

/** `ending`: how the analyst ended the run these todos belong to, if they did. */
type Props = { todos: TodoItem[]; snapshotTodoIds: string[]; ending?: RunEndingView | null };

const MARK: Record<TodoStatus, string> = {
  pending: "○",
  in_progress: "◐",
  completed: "●",
  failed: "✕",
  skipped: "↷",
  cancelled: "⊘",
};

/** How the runtime records a todo cancelled by the analyst's Stop or Abort. */
const ENDED_BY_ANALYST = /^(stopped|aborted) by the analyst\b/;

/** The plan: todos by phase, with their status, checkpoints and snapshots. */
export function TodoPanel({ todos, snapshotTodoIds, ending = null }: Props) {
  const { t } = useTranslation();
  // The runtime words the analyst's Stop or Abort in English for the record (finish.rs); the
  // analyst reads it in the window's language, from how the run ended. A reason the model gave
  // is shown as it wrote it.
  const reasonOf = (todo: TodoItem) =>
    todo.status === "cancelled" && ending && ENDED_BY_ANALYST.test(todo.reason ?? "")
      ? endedText(t, ending)
      : todo.reason;
  const phases: { phase: string | null; todos: TodoItem[] }[] = [];
  for (const todo of todos) {
    const last = phases[phases.length - 1];
    if (last && last.phase === todo.phase) last.todos.push(todo);
    else phases.push({ phase: todo.phase, todos: [todo] });
  }
  return (
    <section className="side-panel todo-panel" data-testid="todo-panel" aria-label={t("plan.label")}>
      <h3>{t("plan.label")}</h3>
      {todos.length === 0 ? (
        <p className="side-empty">{t("plan.empty")}</p>
      ) : (
        phases.map((group, i) => (
          <div key={i} className="todo-phase" data-testid="todo-phase">
            {group.phase && <h4>{group.phase}</h4>}
            <ol>
              {group.todos.map((todo) => (
                <li key={todo.id} className={`todo status-${todo.status}`} data-testid="todo" data-status={todo.status}>
                  <span className="todo-mark" aria-hidden="true">
                    {MARK[todo.status]}
                  </span>
                  <span className="todo-title">{todo.title}</span>
                  {/* Its state and marks in words, not only as symbols. */}
                  <span className={`todo-chip chip-${todo.status}`} data-testid="todo-status">
                    {todoStatusLabel(t, todo.status)}
                  </span>
                  {todo.checkpoint && (
                    <span className="todo-chip" data-testid="todo-checkpoint" title={t("plan.checkpoint")}>
                      {t("plan.chips.checkpoint")}
                    </span>
                  )}
                  {snapshotTodoIds.includes(todo.id) && (
                    <span className="todo-chip" data-testid="todo-snapshot" title={t("plan.snapshot")}>
                      {t("plan.chips.snapshot")}
                    </span>
                  )}
                  {reasonOf(todo) && <p className="todo-reason">{reasonOf(todo)}</p>}
                </li>
              ))}
            </ol>
          </div>
        ))
      )}
    </section>
  );
}
