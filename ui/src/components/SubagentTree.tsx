import { useTranslation } from "react-i18next";
import type { ExecutionStatus } from "../bindings";
import { executionStatusLabel } from "../lib/labels";

export type SubagentNode = {
  executionId: string;
  parentId: string | null;
  conversationId: string;
  depth: number;
  task: string;
  status: ExecutionStatus;
  /** Its conversation was deleted: listed, but there is nothing to open. */
  deleted?: boolean;
};

type Props = { nodes: SubagentNode[]; onOpen: (conversationId: string, task: string) => void };

/** The subagents of the conversation's runs, live, indented by depth; a click opens one. */
export function SubagentTree({ nodes, onOpen }: Props) {
  const { t } = useTranslation();
  if (nodes.length === 0) return null;
  return (
    <section className="side-panel subagent-tree" data-testid="subagent-tree" aria-label={t("subagents.label")}>
      <h3>{t("subagents.label")}</h3>
      <ul>
        {nodes.map((node) => (
          <li key={node.executionId} className={`subagent-row depth-${Math.min(node.depth, 6)}`}>
            {node.deleted ? (
              <span className="subagent subagent-deleted" data-testid="subagent" data-depth={node.depth} data-deleted="true">
                <span className="subagent-task">{node.task}</span>
                <span className="subagent-status">{t("subagents.deleted")}</span>
              </span>
            ) : (
            <button
              type="button"
              className={`subagent status-${node.status}`}
              data-testid="subagent"
              data-depth={node.depth}
              data-status={node.status}
              onClick={() => onOpen(node.conversationId, node.task)}
            >
              <span className="subagent-task">{node.task}</span>
              <span className="subagent-status">{executionStatusLabel(t, node.status)}</span>
            </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
