import { useEffect, useState } from "react";
import { call } from "../api/call";
import { commands, type FigureView, type MessageView } from "../bindings";

/** Figures read, by conversation, seq and text length (an answer settled in place is new). */
const cache = new Map<string, readonly FigureView[]>();
/** How many answers' figures the cache keeps. */
const CACHE_ENTRIES = 500;

/** Whether an answer's figures are worth checking: the model's final answer with a digit in it. */
export function checksFigures(message: MessageView): boolean {
  return (
    message.role === "assistant" &&
    message.answer !== null &&
    message.toolCalls.length === 0 &&
    message.content.length <= 60_000 &&
    /[0-9〇一二三四五六七八九十百千万亿]/.test(message.content)
  );
}

/**
 * The figures of an answer, read once from the backend when the row is shown: what makes each
 * linked figure a link and each unsupported one marked. None for a message that is no answer,
 * or while they are read; a failed read leaves the answer as it is.
 */
export function useFigures(conversationId: string | undefined, message: MessageView): readonly FigureView[] | undefined {
  const wanted = conversationId !== undefined && checksFigures(message);
  const key = `${conversationId}:${message.seq}:${message.content.length}`;
  const [figures, setFigures] = useState<readonly FigureView[] | undefined>(() => cache.get(key));
  useEffect(() => {
    if (!wanted || conversationId === undefined) return;
    const hit = cache.get(key);
    if (hit) {
      setFigures(hit);
      return;
    }
    let alive = true;
    void (async () => {
      const res = await call(() => commands.messageFigures(conversationId, message.seq));
      if (res.status !== "ok") return;
      cache.set(key, res.data.figures);
      if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
      if (alive) setFigures(res.data.figures);
    })();
    return () => {
      alive = false;
    };
  }, [wanted, key, conversationId, message.seq]);
  return wanted ? figures : undefined;
}
