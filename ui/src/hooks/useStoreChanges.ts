import { Channel } from "@tauri-apps/api/core";
import { useEffect } from "react";
import { commands, type StoreChange } from "../bindings";
import { useLatest } from "./useLatest";

/** Changes that arrive together (a batch another desktop wrote) make one re-read. */
const SETTLE_MS = 50;

/**
 * What other desktops write to a shared store, as it lands: Rust forwards the database's change
 * feed through a channel, and `onChange` re-reads what is shown (the list, and through its
 * counts the open conversation's messages, read again by seq). A change after a reconnect asks
 * for the same, since what was sent while the connection was down is lost. On this computer's
 * file there is no feed, and the window's own polling stays the only source.
 */
export function useStoreChanges(onChange: () => void): void {
  const handler = useLatest(onChange);
  useEffect(() => {
    let alive = true;
    let timer: number | undefined;
    const channel = new Channel<StoreChange>();
    channel.onmessage = () => {
      if (!alive || timer !== undefined) return;
      timer = window.setTimeout(() => {
        timer = undefined;
        if (alive) handler.current();
      }, SETTLE_MS);
    };
    // Outside the app's window (a plain browser) nothing answers, and nothing changes.
    commands.storeChangesWatch(channel).catch(() => undefined);
    return () => {
      alive = false;
      if (timer !== undefined) window.clearTimeout(timer);
    };
  }, [handler]);
}
