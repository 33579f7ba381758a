import { useTranslation } from "react-i18next";
import type { TodoChangesView } from "../bindings";

/**
 * What a todo changed since it started, which is what a rollback would undo: counts in one
 * line, and the paths (the first few of each kind) folded under it.
 */
export function TodoChanges({ changes }: { changes: TodoChangesView }) {
  const { t } = useTranslation();
  const counts = [
    changes.addedCount > 0 && t("recovery.changes.created", { count: changes.addedCount }),
    changes.changedCount > 0 && t("recovery.changes.changed", { count: changes.changedCount }),
    changes.removedCount > 0 && t("recovery.changes.removed", { count: changes.removedCount }),
    t("recovery.changes.messages", { count: changes.messagesSince }),
  ].filter((part): part is string => typeof part === "string");
  const files = changes.addedCount + changes.changedCount + changes.removedCount;
  const summary =
    files === 0 && changes.workspaceUnknown === null ? [t("recovery.changes.noFiles"), ...counts] : counts;
  return (
    <>
      <p className="todo-changes-summary" data-testid="todo-changes-summary">
        {t("recovery.changes.since", { list: summary.join(t("recovery.changes.separator")) })}
      </p>
      {changes.workspaceUnknown !== null && (
        <p className="todo-changes-unknown" data-testid="todo-changes-unknown">
          {t("recovery.changes.unknown", { reason: changes.workspaceUnknown })}
        </p>
      )}
      {files > 0 && (
        <details className="todo-changes-paths" data-testid="todo-changes-paths">
          <summary>{t("recovery.changes.paths")}</summary>
          <PathList kind="created" paths={changes.added} total={changes.addedCount} />
          <PathList kind="changed" paths={changes.changed} total={changes.changedCount} />
          <PathList kind="removed" paths={changes.removed} total={changes.removedCount} />
        </details>
      )}
    </>
  );
}

/** The listed paths of one kind, and how many more there are. */
function PathList({ kind, paths, total }: { kind: "created" | "changed" | "removed"; paths: string[]; total: number }) {
  const { t } = useTranslation();
  if (total === 0) return null;
  return (
    <ul className={`todo-changes-list ${kind}`} aria-label={t(`recovery.changes.kinds.${kind}`)} data-testid={`todo-changes-${kind}`}>
      {paths.map((path) => (
        <li key={path}>
          <code>{path}</code>
        </li>
      ))}
      {total > paths.length && <li className="todo-changes-more">{t("recovery.changes.more", { count: total - paths.length })}</li>}
    </ul>
  );
}
