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
};

export function ConversationList({ conversations, loading, openId, onOpen, onRename, onDelete }: Props) {
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
      {conversations.map((c) => (
        <ConversationItem
          key={c.id}
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
