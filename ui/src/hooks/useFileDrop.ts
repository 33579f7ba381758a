import { Channel } from "@tauri-apps/api/core";
import { useEffect, useState } from "react";
import { commands, type FileDrag } from "../bindings";
import { useLatest } from "./useLatest";

/**
 * Files dragged onto the window: whether some are over it now (to show where they will go),
 * and the paths of each drop with where it landed (CSS pixels). Rust tells of drags through a channel, from the window's own drop
 * event, and imports only paths it saw in that event. A channel, not Tauri's drag events: see
 * `file_drags_watch` for what listening to events costs the app's memory.
 */
export function useFileDrop(onDrop: (paths: string[], at: { x: number; y: number }) => void): boolean {
  const [over, setOver] = useState(false);
  const handler = useLatest(onDrop);
  useEffect(() => {
    let alive = true;
    const channel = new Channel<FileDrag>();
    channel.onmessage = (drag) => {
      if (!alive) return;
      if (drag.type === "entered") setOver(true);
      else if (drag.type === "left") setOver(false);
      else {
        setOver(false);
        if (drag.paths.length > 0) handler.current(drag.paths, { x: drag.x ?? 0, y: drag.y ?? 0 });
      }
    };
    // Outside the app's window (a plain browser) nothing answers, and nothing is dropped.
    commands.fileDragsWatch(channel).catch(() => undefined);
    return () => {
      alive = false;
    };
  }, [handler]);
  return over;
}
