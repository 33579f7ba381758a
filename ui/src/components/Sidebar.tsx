import { useTranslation } from "react-i18next";
import { useMinuteTick } from "../hooks/useMinuteTick";
import type { ConversationSummary } from "../bindings";
import type { DeletedConversation } from "../hooks/useConversations";
import { ConversationList } from "./ConversationList";
import { NewConversationForm } from "./NewConversationForm";
import { UndoBar } from "./UndoBar";

type Props = {
  conversations: ConversationSummary[];
  loading: boolean;
  openId: string | null;
  deleted: DeletedConversation | null;
  onCreate: (title: string) => Promise<boolean>;
  onOpen: (id: string) => void;
  onRename: (id: string, title: string) => Promise<boolean>;
  onDelete: (id: string) => void;
  onUndoDelete: () => void;
  onDismissUndo: () => void;
};

export function Sidebar(props: Props) {
  const { t } = useTranslation();
  useMinuteTick();
  return (
    <aside className="sidebar" id="conversations-sidebar" data-testid="sidebar" aria-label={t("sidebar.heading")}>
      <NewConversationForm onCreate={props.onCreate} />
      <h2 className="sidebar-heading">{t("sidebar.heading")}</h2>
      <div className="sidebar-scroll">
        <ConversationList
          conversations={props.conversations}
          loading={props.loading}
          openId={props.openId}
          onOpen={props.onOpen}
          onRename={props.onRename}
          onDelete={props.onDelete}
        />
      </div>
      {props.deleted && (
        <UndoBar
          title={props.deleted.conversation.title}
          onUndo={props.onUndoDelete}
          onDismiss={props.onDismissUndo}
        />
      )}
    </aside>
  );
}
