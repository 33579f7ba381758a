import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeBackend } from "../test/fakeBackend";
import { reportFirstPaint } from "./startup";

describe("reportFirstPaint", () => {
  afterEach(() => vi.restoreAllMocks());

  it("sends WebKit's first contentful paint as time since the epoch, with the first frame", async () => {
    const backend = new FakeBackend().install();
    vi.spyOn(performance, "getEntriesByType").mockReturnValue([
      { name: "first-paint", startTime: 90 } as PerformanceEntry,
      { name: "first-contentful-paint", startTime: 120 } as PerformanceEntry,
    ]);
    await reportFirstPaint(5_000);
    expect(backend.painted).toEqual([{ firstPaint: performance.timeOrigin + 120, firstFrame: 5_000 }]);
  });

  it("sends no paint where WebKit recorded none, and never throws when the app refuses", async () => {
    const backend = new FakeBackend().install();
    vi.spyOn(performance, "getEntriesByType").mockReturnValue([]);
    await reportFirstPaint(7_000);
    expect(backend.painted).toEqual([{ firstPaint: null, firstFrame: 7_000 }]);
    const handler = backend as unknown as { handle: () => Promise<unknown> };
    vi.spyOn(handler, "handle").mockRejectedValue({ code: "invalid_input", message: "no" });
    await expect(reportFirstPaint(Number.NaN)).resolves.toBeUndefined();
  });
});
