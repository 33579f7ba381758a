import { useTranslation } from "react-i18next";
import type { TodoItem } from "../bindings";

type Props = { todos: TodoItem[]; snapshotTodoIds: string[] };

const MARK: Record<string, string> = {
  pending: "○",
  in_progress: "◐",
  completed: "●",
  failed: "✕",
  skipped: "↷",
  cancelled: "⊘",
};

/** The plan: todos by phase, with their status, checkpoints and snapshots. */
export function TodoPanel({ todos, snapshotTodoIds }: Props) {
  const { t } = useTranslation();
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
                    {MARK[todo.status] ?? "○"}
                  </span>
                  <span className="todo-title">{todo.title}</span>
                  {/* Its state and marks in words, not only as symbols. */}
                  <span className={`todo-chip chip-${todo.status}`} data-testid="todo-status">
                    {t(`plan.status.${todo.status}`, { defaultValue: todo.status })}
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
                  {todo.reason && <p className="todo-reason">{todo.reason}</p>}
                </li>
              ))}
            </ol>
          </div>
        ))
      )}
    </section>
  );
}
