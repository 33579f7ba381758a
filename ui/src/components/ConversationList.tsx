import { useTranslation } from "react-i18next";
import type { AppError, ConversationSummary } from "../bindings";
import { ConversationItem } from "./ConversationItem";

type Props = {
  conversations: ConversationSummary[];
  loading: boolean;
  openId: string | null;
  onOpen: (id: string) => void;
  onRename: (id: string, title: string) => Promise<AppError | null>;
  onDelete: (id: string) => Promise<AppError | null>;
  /** Without nesting: a filtered list shows its matches as they are. */
  flat?: boolean;
};

/** A conversation and how deep it sits under the conversations whose runs spawned it. */
export type Nested = { conversation: ConversationSummary; depth: number };

/**
 * The list in its order, each subagent's conversation right under its parent's (and theirs
 * under them). A child whose parent is not listed (deleted) stands at the top level.
 */
export function nest(conversations: ConversationSummary[]): Nested[] {
  const listed = new Set(conversations.map((c) => c.id));
  const children = new Map<string, ConversationSummary[]>();
  for (const c of conversations) {
    if (c.parentId !== null && listed.has(c.parentId) && c.parentId !== c.id) {
      children.set(c.parentId, [...(children.get(c.parentId) ?? []), c]);
    }
  }
  const out: Nested[] = [];
  const seen = new Set<string>();
  const visit = (c: ConversationSummary, depth: number) => {
    if (seen.has(c.id)) return;
    seen.add(c.id);
    out.push({ conversation: c, depth });
    for (const child of children.get(c.id) ?? []) visit(child, depth + 1);
  };
  for (const c of conversations) {
    if (c.parentId === null || !listed.has(c.parentId)) visit(c, 0);
  }
  // A cycle (which the store never makes) would leave rows unvisited: they still show.
  for (const c of conversations) visit(c, 0);
  return out;
}

export function ConversationList({ conversations, loading, openId, onOpen, onRename, onDelete, flat = false }: Props) {
  const { t } = useTranslation();
  if (loading && conversations.length === 0) {
    return (
      <p className="sidebar-note" data-testid="conversations-loading" role="status">
        {t("sidebar.loading")}
      </p>
    );
  }
  if (conversations.length === 0) {
    return (
      <p className="sidebar-note" data-testid="conversations-empty">
        {t("sidebar.empty")}
      </p>
    );
  }
  return (
    <ul className="conversation-list" data-testid="conversation-list" aria-label={t("sidebar.heading")}>
      {(flat ? conversations.map((c) => ({ conversation: c, depth: 0 })) : nest(conversations)).map(({ conversation: c, depth }) => (
        <ConversationItem
          key={c.id}
          depth={depth}
          conversation={c}
          active={c.id === openId}
          onOpen={onOpen}
          onRename={onRename}
          onDelete={onDelete}
        />
      ))}
    </ul>
  );
}
