import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useMinuteTick } from "../hooks/useMinuteTick";
import type { AppError, ConversationSummary, SearchHitView } from "../bindings";
import type { DeletedConversation } from "../hooks/useConversations";
import { ConversationList } from "./ConversationList";
import { NewConversationForm } from "./NewConversationForm";
import { SearchResults } from "./SearchResults";
import { ImportControl, type ImportNotice } from "./ImportControl";
import { UndoBar } from "./UndoBar";

type Props = {
  conversations: ConversationSummary[];
  loading: boolean;
  openId: string | null;
  deleted: DeletedConversation | null;
  onCreate: (title: string) => Promise<AppError | null>;
  onOpen: (id: string) => void;
  onRename: (id: string, title: string) => Promise<AppError | null>;
  onDelete: (id: string) => Promise<AppError | null>;
  onUndoDelete: () => void;
  /** Why the last Undo failed, shown in its bar. */
  undoError: AppError | null;
  onDismissUndo: () => void;
  /** Opens a search hit's conversation at its message. */
  onOpenHit: (hit: SearchHitView, query: string) => void;
  /** Opens the dialog that imports a conversation from a JSONL file. */
  onImport: () => void;
  /** What the last import (picked or dropped) left to say, if anything. */
  importNotice: ImportNotice | null;
  onDismissImportNotice: () => void;
};

/** The id of the search field, for the shortcut that focuses it. */
export const SEARCH_INPUT = "sidebar-search";

/** Whether a title holds every typed word, in any case. */
export function titleMatches(title: string, query: string): boolean {
  const lower = title.toLocaleLowerCase();
  return query
    .toLocaleLowerCase()
    .split(/\s+/)
    .filter((w) => w !== "")
    .every((w) => lower.includes(w));
}

export function Sidebar(props: Props) {
  const { t } = useTranslation();
  useMinuteTick();
  // Typing filters the titles at once and searches the messages of every conversation.
  const [query, setQuery] = useState("");
  const searching = query.trim() !== "";
  const shown = searching ? props.conversations.filter((c) => titleMatches(c.title, query)) : props.conversations;
  return (
    <aside className="sidebar" id="conversations-sidebar" data-testid="sidebar" aria-label={t("sidebar.heading")}>
      <NewConversationForm onCreate={props.onCreate} />
      <ImportControl onImport={props.onImport} notice={props.importNotice} onDismiss={props.onDismissImportNotice} />
      <div className="sidebar-search">
        <input
          id={SEARCH_INPUT}
          type="search"
          className="text-input sidebar-search-input"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape" && query !== "") {
              e.preventDefault();
              setQuery("");
            }
          }}
          placeholder={t("search.placeholder")}
          aria-label={t("search.label")}
          data-testid="sidebar-search"
        />
      </div>
      <h2 className="sidebar-heading">{t("sidebar.heading")}</h2>
      {searching && (
        // The results stand in for the list; this is the way back to it.
        <button type="button" className="link-button sidebar-back" data-testid="search-back" onClick={() => setQuery("")}>
          {t("search.back")}
        </button>
      )}
      <div className="sidebar-scroll">
        {searching && shown.length === 0 ? (
          <p className="sidebar-note" data-testid="no-title-matches">
            {t("search.noTitles")}
          </p>
        ) : (
        <ConversationList
          conversations={shown}
          flat={searching}
          loading={props.loading}
          openId={props.openId}
          onOpen={props.onOpen}
          onRename={props.onRename}
          onDelete={props.onDelete}
        />
        )}
        {searching && <SearchResults query={query} onOpen={(hit) => props.onOpenHit(hit, query)} />}
      </div>
      {props.deleted && (
        <UndoBar
          title={props.deleted.conversation.title}
          onUndo={props.onUndoDelete}
          error={props.undoError}
          onDismiss={props.onDismissUndo}
        />
      )}
    </aside>
  );
}
