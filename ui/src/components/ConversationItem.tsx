import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { AppError, ConversationSummary } from "../bindings";
import { InlineError } from "./InlineError";
import { formatCompact, formatNumber } from "../lib/format";
import { PencilIcon, TrashIcon } from "./Icons";
import { RelativeTime } from "./RelativeTime";
import { RenameEditor } from "./RenameEditor";

type Props = {
  conversation: ConversationSummary;
  active: boolean;
  onOpen: (id: string) => void;
  onRename: (id: string, title: string) => Promise<AppError | null>;
  /** Resolves to the error that kept the conversation, if any: shown on its row. */
  onDelete: (id: string) => Promise<AppError | null>;
  /** How deep under its parent conversation it sits (a subagent's, 1 and more). */
  depth?: number;
};

export function ConversationItem({ conversation, active, onOpen, onRename, onDelete, depth = 0 }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [editing, setEditing] = useState(false);
  const [deleteError, setDeleteError] = useState<AppError | null>(null);
  const { id, title, messageCount, tokens, updatedAt } = conversation;

  async function save(newTitle: string) {
    const failed = await onRename(id, newTitle);
    if (failed === null) setEditing(false);
    return failed;
  }

  return (
    <li
      className={`conversation-item${active ? " active" : ""}${depth > 0 ? " child" : ""}`}
      data-depth={depth}
      style={depth > 0 ? { marginInlineStart: `${Math.min(depth, 4) * 14}px` } : undefined}
      data-testid="conversation-item"
      data-conversation-id={id}
      aria-current={active ? "true" : undefined}
      onClick={() => onOpen(id)}
    >
      {editing ? (
        <RenameEditor initial={title} onSave={save} onCancel={() => setEditing(false)} />
      ) : (
        <button type="button" className="conversation-open" data-testid="conversation-title-button" title={title}>
          <span className="conversation-title" data-testid="conversation-title-text">
            {title}
          </span>
        </button>
      )}
      <div className="conversation-meta">
        <span>{t("conversation.messages", { count: messageCount, formatted: formatNumber(messageCount, lang) })}</span>
        <span aria-hidden="true">·</span>
        <span title={t("conversation.tokens", { count: tokens, formatted: formatNumber(tokens, lang) })}>
          {t("conversation.tokens", { count: tokens, formatted: formatCompact(tokens, lang) })}
        </span>
        <span aria-hidden="true">·</span>
        <RelativeTime iso={updatedAt} />
      </div>
      {!editing && (
        <div className="conversation-actions">
          <button
            type="button"
            className="icon-button"
            data-testid="rename-conversation"
            aria-label={`${t("conversation.rename")}: ${title}`}
            title={t("conversation.rename")}
            onClick={(e) => {
              e.stopPropagation();
              setEditing(true);
            }}
          >
            <PencilIcon />
          </button>
          <button
            type="button"
            className="icon-button danger"
            data-testid="delete-conversation"
            aria-label={`${t("conversation.delete")}: ${title}`}
            title={t("conversation.delete")}
            onClick={(e) => {
              e.stopPropagation();
              void onDelete(id).then(setDeleteError);
            }}
          >
            <TrashIcon />
          </button>
        </div>
      )}
      {deleteError && (
        <div className="conversation-error">
          <InlineError error={deleteError} testId="delete-error" />
        </div>
      )}
    </li>
  );
}
