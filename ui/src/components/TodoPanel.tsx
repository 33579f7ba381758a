import { useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type ExecutionStatus, type PlanRollbackView, type RunEndingView, type TodoChangesView, type TodoView, type TodoStatus } from "../bindings";
import { executionStatusLabel, todoStatusLabel } from "../lib/labels";
import { endedText } from "../lib/runEnding";
import { InlineError } from "./InlineError";
import { TodoChanges } from "./TodoChanges";

/** The run a plan belongs to: named above the plan, and rolled back from it once it ended. */
export type PlanOwner = { executionId: string; task: string; status: ExecutionStatus };

/** `ending`: how the analyst ended the run these todos belong to, if they did. */
type Props = {
  todos: TodoView[];
  snapshotTodoIds: string[];
  ending?: RunEndingView | null;
  owner?: PlanOwner | null;
  /** The conversation's messages or plan changed (a rollback, or its undo): read them again. */
  onChanged?: () => void;
};

/** Statuses after which a run can be rolled back from its plan (a waiting one has its panel). */
const ENDED: readonly ExecutionStatus[] = ["succeeded", "failed", "cancelled", "interrupted"];

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
export function TodoPanel({ todos, snapshotTodoIds, ending = null, owner = null, onChanged }: Props) {
  const { t } = useTranslation();
  const [asking, setAsking] = useState<{ todo: TodoView; changes: TodoChangesView | null } | null>(null);
  const [done, setDone] = useState<{ todo: string; result: PlanRollbackView; undone: boolean } | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [working, setWorking] = useState(false);
  const canRollBack = owner !== null && ENDED.includes(owner.status);
  const ask = async (todo: TodoView) => {
    if (!owner) return;
    setError(null);
    setDone(null);
    setAsking({ todo, changes: null });
    const res = await call(() => commands.planRollbackPreview(owner.executionId, todo.id));
    if (res.status === "ok") setAsking({ todo, changes: res.data });
    else {
      setAsking(null);
      setError(res.error);
    }
  };
  const rollBack = async () => {
    if (!owner || !asking) return;
    setWorking(true);
    const res = await call(() => commands.planRollback(owner.executionId, asking.todo.id));
    setWorking(false);
    if (res.status === "ok") {
      setDone({ todo: asking.todo.title, result: res.data, undone: false });
      setAsking(null);
      onChanged?.();
    } else setError(res.error);
  };
  const undo = async () => {
    if (!owner || !done) return;
    setWorking(true);
    const res = await call(() => commands.planRollbackUndo(owner.executionId, done.result.undo));
    setWorking(false);
    if (res.status === "ok") {
      setDone({ ...done, undone: true });
      onChanged?.();
    } else setError(res.error);
  };
  // The runtime words the analyst's Stop or Abort in English for the record (finish.rs); the
  // analyst reads it in the window's language, from how the run ended. A reason the model gave
  // is shown as it wrote it.
  const reasonOf = (todo: TodoView) =>
    todo.status === "cancelled" && ending && ENDED_BY_ANALYST.test(todo.reason ?? "")
      ? endedText(t, ending)
      : todo.reason;
  const phases: { phase: string | null; todos: TodoView[] }[] = [];
  for (const todo of todos) {
    const last = phases[phases.length - 1];
    if (last && last.phase === todo.phase) last.todos.push(todo);
    else phases.push({ phase: todo.phase, todos: [todo] });
  }
  return (
    <section className="side-panel todo-panel" data-testid="todo-panel" aria-label={t("plan.label")}>
      <h3>{t("plan.label")}</h3>
      {owner && (
        <p className="muted plan-owner" data-testid="plan-owner" title={owner.task}>
          {t("plan.owner", { task: owner.task, status: executionStatusLabel(t, owner.status) })}
        </p>
      )}
      {done && (
        <div className="plan-rolled-back" role="status" data-testid="plan-rolled-back">
          <span>
            {done.undone
              ? t("plan.undone", { todo: done.todo })
              : t("plan.rolledBack", {
                  todo: done.todo,
                  restored: done.result.filesRestored,
                  removed: done.result.filesRemoved,
                  messages: done.result.messagesRemoved,
                })}
            {done.result.workspaceError && !done.undone && ` ${t("plan.workspaceError", { reason: done.result.workspaceError })}`}
          </span>
          {!done.undone && (
            <button type="button" className="button button-small" data-testid="plan-rollback-undo" disabled={working} onClick={() => void undo()}>
              {t("plan.undo")}
            </button>
          )}
        </div>
      )}
      {asking && (
        <div className="plan-rollback-preview" role="alertdialog" aria-label={t("plan.rollBackTo", { todo: asking.todo.title })} data-testid="plan-rollback-preview">
          <p>
            <strong>{t("plan.rollBackTo", { todo: asking.todo.title })}</strong>
          </p>
          {asking.changes === null ? <p className="muted">{t("plan.previewing")}</p> : <TodoChanges changes={asking.changes} />}
          <div className="plan-rollback-actions">
            <button
              type="button"
              className="button button-small button-danger"
              data-testid="plan-rollback-confirm"
              disabled={working || asking.changes === null}
              onClick={() => void rollBack()}
            >
              {t("plan.rollBack")}
            </button>
            <button type="button" className="button button-small" data-testid="plan-rollback-cancel" onClick={() => setAsking(null)}>
              {t("plan.cancel")}
            </button>
          </div>
        </div>
      )}
      <InlineError error={error} testId="plan-rollback-error" />
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
                  {snapshotTodoIds.includes(todo.id) &&
                    (canRollBack ? (
                      <button
                        type="button"
                        className="todo-chip todo-chip-action"
                        data-testid="todo-snapshot"
                        title={t("plan.rollBackHint")}
                        onClick={() => void ask(todo)}
                      >
                        {t("plan.chips.rollBack")}
                      </button>
                    ) : (
                      <span className="todo-chip" data-testid="todo-snapshot" title={t("plan.snapshot")}>
                        {t("plan.chips.snapshot")}
                      </span>
                    ))}
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
