import { useCallback, useEffect, useRef, useState } from "react";
import type { CompactionTrigger } from "../bindings";
import type { RunState } from "../run/state";

/** A compression just made, as its notice shows it: what it saved, and its id for undo. */
export type CompressionNotice = {
  compactionId: string;
  /** manual for the compression dialog; auto, overflow, phase or checkpoint for a run's. */
  trigger: CompactionTrigger;
  tokensBefore: number;
  tokensAfter: number;
};

/**
 * The notice of the newest compression per conversation, manual or made by a run, kept until
 * it is dismissed or undone (switching conversations keeps it). A newer compression replaces
 * it.
 */
export function useCompressionNotices(runs: Record<string, RunState>) {
  const [notices, setNotices] = useState<Record<string, CompressionNotice>>({});

  const show = useCallback((conversationId: string, notice: CompressionNotice) => {
    setNotices((all) => ({ ...all, [conversationId]: notice }));
  }, []);

  const dismiss = useCallback((conversationId: string) => {
    setNotices((all) => {
      if (!(conversationId in all)) return all;
      const { [conversationId]: _gone, ...rest } = all;
      return rest;
    });
  }, []);

  // A run's compactions, newest last: each new one is noticed.
  const seen = useRef<Record<string, number>>({});
  useEffect(() => {
    for (const [conversationId, run] of Object.entries(runs)) {
      const count = run.compactions.length;
      const before = seen.current[conversationId] ?? 0;
      seen.current[conversationId] = count;
      const newest = run.compactions[count - 1];
      if (count > before && newest) {
        show(conversationId, {
          compactionId: newest.id,
          trigger: newest.trigger,
          tokensBefore: newest.tokensBefore,
          tokensAfter: newest.tokensAfter,
        });
      }
    }
  }, [runs, show]);

  return { notices, show, dismiss };
}
