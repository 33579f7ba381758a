import { useTranslation } from "react-i18next";
import type { ConversationSummary, MessageView } from "../bindings";
import { formatNumber } from "../lib/format";
import { EmptyState } from "./EmptyState";
import { MessageItem } from "./MessageItem";
import { RelativeTime } from "./RelativeTime";

type Props = {
  conversation: ConversationSummary;
  messages: MessageView[];
  loading: boolean;
};

export function ConversationView({ conversation, messages, loading }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const { title, messageCount, tokens, updatedAt } = conversation;

  return (
    <section className="conversation-view" data-testid="conversation-view" data-conversation-id={conversation.id}>
      <header className="conversation-header">
        <h2 className="conversation-heading" data-testid="conversation-title">
          {title}
        </h2>
        <div className="conversation-header-meta">
          <span>{t("conversation.messages", { count: messageCount })}</span>
          <span aria-hidden="true">·</span>
          <span>{t("conversation.tokens", { count: tokens, formatted: formatNumber(tokens, lang) })}</span>
          <span aria-hidden="true">·</span>
          <RelativeTime iso={updatedAt} />
        </div>
      </header>
      <div className="message-scroll">
        {loading ? (
          <EmptyState testId="messages-loading">{t("main.loading")}</EmptyState>
        ) : messages.length === 0 ? (
          <EmptyState testId="no-messages">{t("main.noMessages")}</EmptyState>
        ) : (
          <ol className="message-list" data-testid="message-list">
            {messages.map((m) => (
              <MessageItem key={m.id} message={m} />
            ))}
          </ol>
        )}
      </div>
    </section>
  );
}
