import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError } from "../bindings";
import { formatNumber } from "../lib/format";
import { shortcutLabel } from "../lib/platform";
import { CloseIcon } from "./Icons";
import { useLatest } from "../hooks/useLatest";

/** Typing settles for this long before the store is asked. */
const DEBOUNCE_MS = 250;
/** The id of the find field, for the shortcut that opens the bar. */
export const FIND_INPUT = "find-in-conversation";

type Props = {
  conversationId: string;
  /** Brings a message into view and marks it. */
  onReveal: (seq: number) => void;
  onStart: () => void;
  onEnd: () => void;
  onClose: () => void;
};

/** Matches of the current words, and which one is shown. */
type Found = { text: string; seqs: number[]; truncated: boolean; index: number };

/**
 * Find in the conversation, through the store's full-text index rather than the loaded pages,
 * so a match 10,000 messages up is found and opened like one on screen. It starts at the
 * newest match and steps upwards (Enter; Shift+Enter goes back down), as chat apps search.
 * Beside it: the first message, the latest, and "go to" a message by its number.
 */
export function FindBar({ conversationId, onReveal, onStart, onEnd, onClose }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [text, setText] = useState("");
  const [found, setFound] = useState<Found | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [goTo, setGoTo] = useState("");
  const input = useRef<HTMLInputElement>(null);
  const reveal = useLatest(onReveal);

  useEffect(() => input.current?.focus(), []);

  useEffect(() => {
    const words = text.trim();
    if (words === "") {
      setFound(null);
      setError(null);
      return;
    }
    let alive = true;
    const timer = window.setTimeout(() => {
      void (async () => {
        const res = await call(() => commands.findInConversation(conversationId, words));
        if (!alive) return;
        if (res.status === "error") {
          setError(res.error);
          setFound(null);
          return;
        }
        setError(null);
        const { seqs, truncated } = res.data;
        const index = seqs.length - 1;
        setFound({ text: words, seqs, truncated, index });
        const seq = seqs[index];
        if (seq !== undefined) reveal.current(seq);
      })();
    }, DEBOUNCE_MS);
    return () => {
      alive = false;
      window.clearTimeout(timer);
    };
  }, [text, conversationId, reveal]);

  const step = (by: number) => {
    if (!found || found.seqs.length === 0) return;
    const n = found.seqs.length;
    const index = (found.index + by + n) % n;
    setFound({ ...found, index });
    const seq = found.seqs[index];
    if (seq !== undefined) onReveal(seq);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === "Enter") {
      event.preventDefault();
      step(event.shiftKey ? 1 : -1);
    } else if (event.key === "Escape") {
      event.preventDefault();
      onClose();
    }
  };

  const submitGoTo = (event: FormEvent) => {
    event.preventDefault();
    const seq = Number.parseInt(goTo, 10);
    if (Number.isFinite(seq) && seq >= 1) onReveal(seq);
  };

  const count = found
    ? found.seqs.length === 0
      ? t("find.none")
      : t("find.count", {
          index: formatNumber(found.index + 1, lang),
          total: formatNumber(found.seqs.length, lang) + (found.truncated ? "+" : ""),
        })
    : "";
  const none = found !== null && found.seqs.length === 0;

  return (
    <div className="find-bar" role="search" aria-label={t("find.label")} data-testid="find-bar">
      <input
        ref={input}
        id={FIND_INPUT}
        type="search"
        className="text-input find-input"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
        placeholder={t("find.placeholder")}
        aria-label={t("find.label")}
        aria-invalid={none || error !== null}
        data-testid="find-input"
      />
      <span className="find-count" role="status" data-testid="find-count">
        {error ? error.message : count}
      </span>
      <button type="button" className="button button-small" onClick={() => step(-1)} disabled={!found || found.seqs.length === 0} title={t("find.olderHint", { keys: shortcutLabel({ key: "Enter" }) })} data-testid="find-older">
        {t("find.older")}
      </button>
      <button type="button" className="button button-small" onClick={() => step(1)} disabled={!found || found.seqs.length === 0} title={t("find.newerHint", { keys: shortcutLabel({ shift: true, key: "Enter" }) })} data-testid="find-newer">
        {t("find.newer")}
      </button>
      <span className="find-divider" aria-hidden="true" />
      <button type="button" className="button button-small" onClick={onStart} data-testid="jump-to-start">
        {t("find.start")}
      </button>
      <button type="button" className="button button-small" onClick={onEnd} data-testid="jump-to-end">
        {t("find.end")}
      </button>
      <form className="find-goto" onSubmit={submitGoTo}>
        <label>
          <span>{t("find.goTo")}</span>
          <input
            type="number"
            min={1}
            inputMode="numeric"
            value={goTo}
            onChange={(e) => setGoTo(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Escape") onClose();
            }}
            data-testid="go-to-seq"
          />
        </label>
      </form>
      <button type="button" className="icon-button" onClick={onClose} aria-label={t("find.close")} data-testid="find-close">
        <CloseIcon />
      </button>
    </div>
  );
}
