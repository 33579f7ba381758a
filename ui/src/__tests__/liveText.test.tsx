import { act, renderHook, screen, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { useThrottled } from "../hooks/useThrottled";
import { setLanguage } from "../i18n";
import { backendWith, openC1, startRun } from "../test/conversation";

beforeEach(async () => {
  await setLanguage("en");
});

afterEach(() => {
  vi.useRealTimers();
});

describe("the answer as it streams", () => {
  it("reads as Markdown under the Assistant badge, as the stored answer will", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    await startRun(backend, user);
    const live = screen.getByTestId("live-text");
    // Before any text: the badge and what the run is doing.
    expect(within(live).getByTestId("live-role")).toHaveTextContent("Assistant");
    expect(live).toHaveTextContent("Working…");

    act(() => backend.emit({ type: "text_delta", text: "Totals for **R-1**:\n\n| month | sum |\n| --- | ---: |\n" }, 10));
    act(() => backend.emit({ type: "text_delta", text: "| Jan | 1,204 |\n" }, 20));
    const text = screen.getByTestId("live-text");
    expect(await within(text).findByText("R-1", { selector: "strong" })).toBeInTheDocument();
    expect(await within(text).findByRole("table")).toHaveTextContent("Jan1,204");
    expect(text).toHaveAttribute("data-delta-at", "20");
    expect(text).not.toHaveTextContent("Working…");
    expect(within(text).getByTestId("live-content")).toHaveClass("markdown");
  });

  it("says in Chinese who writes it", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    await startRun(backend, user);
    await act(() => setLanguage("zh"));
    expect(within(screen.getByTestId("live-text")).getByTestId("live-role")).toHaveTextContent("助手");
  });
});

describe("a value drawn at most every so often", () => {
  const grows = (next: string, shown: string) => next === "" || shown === "" || !next.startsWith(shown);

  it("passes a change after a quiet spell at once, a burst's newest at the end of the wait", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    vi.advanceTimersByTime(1000);
    const { result, rerender } = renderHook(({ value }) => useThrottled(value, 100, grows), { initialProps: { value: "" } });
    rerender({ value: "a" });
    expect(result.current).toBe("a");
    vi.advanceTimersByTime(30);
    rerender({ value: "ab" });
    rerender({ value: "abc" });
    expect(result.current).toBe("a");
    act(() => vi.advanceTimersByTime(69));
    expect(result.current).toBe("a");
    act(() => vi.advanceTimersByTime(1));
    expect(result.current).toBe("abc");
    // A cleared text, the first of the next, or another one, is drawn at once.
    vi.advanceTimersByTime(10);
    rerender({ value: "" });
    expect(result.current).toBe("");
    rerender({ value: "new" });
    expect(result.current).toBe("new");
    rerender({ value: "other" });
    expect(result.current).toBe("other");
    rerender({ value: "other text" });
    expect(result.current).toBe("other");
  });
});
