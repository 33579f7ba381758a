import { call } from "../api/call";
import { commands } from "../bindings";

/**
 * Tells the app when the page first painted, so its log says how long the start took (an
 * analyst's slow start is then a line to send, and the figures read it from a plain launch).
 * WebKit's first contentful paint where it has one; the workbench's first frame always.
 */
export async function reportFirstPaint(firstFrame: number): Promise<void> {
  const paint = performance
    .getEntriesByType("paint")
    .find((entry) => entry.name === "first-contentful-paint");
  const firstPaint = paint ? performance.timeOrigin + paint.startTime : null;
  // A failure here costs only a log line; the window works the same.
  await call(() => commands.appPainted(firstPaint, firstFrame));
}
