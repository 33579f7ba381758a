import { renderHook, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { FakeBackend } from "../test/fakeBackend";
import { conversation, message } from "../test/fixtures";
import { useMessages } from "./useMessages";

describe("useMessages across a switch", () => {
  it("never gives one conversation's messages for another, not even in the switch's render", async () => {
    new FakeBackend({
      conversations: [conversation({ id: "a", title: "With messages" }), conversation({ id: "b", title: "Empty one" })],
      messages: { a: [message({ id: "a1", seq: 1, content: "from a" })], b: [] },
    }).install();
    // Every render's answer, with the conversation it was asked for.
    const seen: { id: string; contents: string[]; loading: boolean }[] = [];
    const { rerender } = renderHook(
      ({ id }: { id: string }) => {
        const shown = useMessages(id, () => {});
        seen.push({ id, contents: shown.messages.map((m) => m.content), loading: shown.loading });
        return shown;
      },
      { initialProps: { id: "a" } },
    );
    await waitFor(() => expect(seen[seen.length - 1]).toEqual({ id: "a", contents: ["from a"], loading: false }));
    const before = seen.length;
    rerender({ id: "b" });
    await waitFor(() => expect(seen[seen.length - 1]).toEqual({ id: "b", contents: [], loading: false }));
    const afterSwitch = seen.slice(before);
    expect(afterSwitch[0]).toEqual({ id: "b", contents: [], loading: true });
    expect(afterSwitch.filter((s) => s.contents.length > 0)).toEqual([]);
  });
});
