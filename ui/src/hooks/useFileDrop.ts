import { getCurrentWebview } from "@tauri-apps/api/webview";
import { useEffect, useRef, useState } from "react";

/**
 * Files dragged onto the window: whether some are over it now (to show where they will go),
 * and the paths of each drop. The paths come from the window's own drop event; Rust imports
 * only paths it saw in that event.
 */
export function useFileDrop(onDrop: (paths: string[]) => void): boolean {
  const [over, setOver] = useState(false);
  const handler = useRef(onDrop);
  handler.current = onDrop;
  useEffect(() => {
    let unlisten: (() => void) | null = null;
    let alive = true;
    let webview;
    try {
      webview = getCurrentWebview();
    } catch {
      return; // not inside the app's window (a plain browser): nothing is dropped here
    }
    void webview
      .onDragDropEvent((event) => {
        const payload = event.payload;
        if (payload.type === "enter" || payload.type === "over") setOver(true);
        else if (payload.type === "leave") setOver(false);
        else {
          setOver(false);
          if (payload.paths.length > 0) handler.current(payload.paths);
        }
      })
      .then((stop) => {
        if (alive) unlisten = stop;
        else stop();
      })
      .catch(() => undefined);
    return () => {
      alive = false;
      unlisten?.();
    };
  }, []);
  return over;
}
