import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type SearchHitView } from "../bindings";

/** Typing settles for this long before the store is asked. */
const DEBOUNCE_MS = 250;
/** Hits per page: a sidebar's worth. */
const PAGE = 30;

type Props = {
  /** The words typed in the sidebar's search field. */
  query: string;
  /** Opens the hit's conversation at the hit. */
  onOpen: (hit: SearchHitView) => void;
};

type Results = { query: string; hits: SearchHitView[]; next: string | null };

/**
 * Messages across every conversation that hold the typed words, newest first, through the
 * store's full-text index. Each hit names its conversation and shows the words in context; a
 * click opens the conversation at that message.
 */
export function SearchResults({ query, onOpen }: Props) {
  const { t } = useTranslation();
  const [results, setResults] = useState<Results | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [more, setMore] = useState(false);

  useEffect(() => {
    const words = query.trim();
    if (words === "") {
      setResults(null);
      setError(null);
      return;
    }
    let alive = true;
    const timer = window.setTimeout(() => {
      void (async () => {
        const res = await call(() => commands.searchMessages(words, null, null, PAGE));
        if (!alive) return;
        if (res.status === "error") {
          setError(res.error);
          setResults(null);
        } else {
          setError(null);
          setResults({ query: words, hits: res.data.hits, next: res.data.next });
        }
      })();
    }, DEBOUNCE_MS);
    return () => {
      alive = false;
      window.clearTimeout(timer);
    };
  }, [query]);

  const readMore = async () => {
    if (!results?.next) return;
    setMore(true);
    const res = await call(() => commands.searchMessages(results.query, null, results.next, PAGE));
    setMore(false);
    if (res.status === "error") {
      setError(res.error);
      return;
    }
    setResults({ query: results.query, hits: [...results.hits, ...res.data.hits], next: res.data.next });
  };

  return (
    <section className="search-results" aria-label={t("search.messages")} data-testid="search-results">
      <h3 className="sidebar-subheading">{t("search.messages")}</h3>
      {error && (
        <p className="sidebar-note field-error" role="alert" data-testid="search-error">
          {error.message}
        </p>
      )}
      {!error && results === null && (
        <p className="sidebar-note" role="status">
          {t("search.searching")}
        </p>
      )}
      {results && results.hits.length === 0 && (
        <p className="sidebar-note" role="status" data-testid="search-none">
          {t("search.none")}
        </p>
      )}
      {results && results.hits.length > 0 && (
        <ul className="search-hits">
          {results.hits.map((hit) => (
            <li key={`${hit.conversationId}:${hit.seq}`}>
              <button
                type="button"
                className="search-hit"
                data-testid="search-hit"
                data-seq={hit.seq}
                data-conversation-id={hit.conversationId}
                onClick={() => onOpen(hit)}
              >
                <span className="search-hit-title">
                  <span className="search-hit-conversation">{hit.conversationTitle}</span>
                  <span className="search-hit-where">
                    {t(`message.roles.${hit.role as "user" | "assistant" | "tool" | "system"}`)} · #{hit.seq}
                  </span>
                </span>
                <span className="search-hit-snippet">
                  {hit.snippet.before}
                  <mark>{hit.snippet.matched}</mark>
                  {hit.snippet.after}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {results?.next && (
        <button type="button" className="button button-small" onClick={() => void readMore()} disabled={more} data-testid="search-more">
          {t("search.more")}
        </button>
      )}
    </section>
  );
}
