import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { FakeBackend } from "../test/fakeBackend";
import { LOCAL_PROVIDER, conversation } from "../test/fixtures";
import { renderApp } from "../test/render";

function items() {
  return screen.queryAllByTestId("conversation-item");
}

function ids() {
  return items().map((li) => li.getAttribute("data-conversation-id"));
}

function item(id: string) {
  const found = items().find((li) => li.getAttribute("data-conversation-id") === id);
  if (!found) throw new Error(`no item ${id}`);
  return found;
}

function threeConversations() {
  return new FakeBackend({
    conversations: [
      conversation({ id: "c2", title: "Beta", messageCount: 3, tokens: 1234, updatedAt: "2026-02-03T10:00:00Z" }),
      conversation({ id: "c1", title: "Alpha", messageCount: 1, tokens: 1, updatedAt: "2026-02-02T10:00:00Z" }),
      conversation({ id: "c3", title: "Gamma", messageCount: 0, tokens: 0, updatedAt: "2026-02-01T10:00:00Z" }),
    ],
    providers: [LOCAL_PROVIDER],
  }).install();
}

describe("conversation list", () => {
  it("renders what conversation_list returns, in the backend's order", async () => {
    const backend = threeConversations();
    renderApp();

    await waitFor(() => expect(items()).toHaveLength(3));
    expect(backend.calls[0]).toEqual({ cmd: "conversation_list", args: {} });
    expect(ids()).toEqual(["c2", "c1", "c3"]);

    const beta = item("c2");
    expect(beta).toHaveTextContent("Beta");
    expect(beta).toHaveTextContent("3 messages");
    expect(beta).toHaveTextContent("1.2K tokens");
    expect(item("c1")).toHaveTextContent("1 message·1 token");
    expect(beta.querySelector("time")).toHaveAttribute("datetime", "2026-02-03T10:00:00Z");

    expect(screen.getByTestId("empty-state")).toHaveTextContent("Open a conversation, or create a new one.");
  });

  it("says so when there are no conversations", async () => {
    new FakeBackend().install();
    renderApp();
    expect(await screen.findByTestId("conversations-empty")).toHaveTextContent("No conversations yet.");
  });

  it("opens a conversation when its item is clicked", async () => {
    const backend = threeConversations();
    const { user } = renderApp();
    await waitFor(() => expect(items()).toHaveLength(3));

    await user.click(item("c1"));

    expect(await screen.findByTestId("conversation-title")).toHaveTextContent("Alpha");
    expect(item("c1")).toHaveAttribute("aria-current", "true");
    expect(backend.callsOf("message_page")).toEqual([{ cmd: "message_page", args: { conversationId: "c1", at: { kind: "end" }, limit: 200 } }]);
  });
});

describe("creating a conversation", () => {
  it("sends the typed title, shows the new item first and opens it", async () => {
    const backend = threeConversations();
    const { user } = renderApp();
    await waitFor(() => expect(items()).toHaveLength(3));

    const input = screen.getByTestId("new-conversation-title");
    expect(input).toHaveAttribute("placeholder", "Title");
    await user.type(input, "  Project plan ");
    await user.click(screen.getByTestId("new-conversation-submit"));

    await waitFor(() => expect(items()).toHaveLength(4));
    expect(backend.callsOf("conversation_create")).toEqual([
      { cmd: "conversation_create", args: { title: "Project plan" } },
    ]);
    expect(ids()[0]).toBe("new-1");
    expect(item("new-1")).toHaveTextContent("Project plan");
    expect(await screen.findByTestId("conversation-title")).toHaveTextContent("Project plan");
    expect(item("new-1")).toHaveAttribute("aria-current", "true");
    await waitFor(() =>
      expect(backend.callsOf("message_page")).toEqual([{ cmd: "message_page", args: { conversationId: "new-1", at: { kind: "end" }, limit: 200 } }]),
    );
    expect(await screen.findByTestId("no-messages")).toHaveTextContent(
      "No messages yet: give the agent a task below.",
    );
    expect(input).toHaveValue("");
  });

  it("submits with Enter and uses the default title when the field is blank", async () => {
    const backend = new FakeBackend().install();
    const { user } = renderApp();
    await screen.findByTestId("conversations-empty");

    await user.type(screen.getByTestId("new-conversation-title"), "   {Enter}");

    await waitFor(() => expect(items()).toHaveLength(1));
    expect(backend.callsOf("conversation_create")).toEqual([
      { cmd: "conversation_create", args: { title: "Untitled conversation" } },
    ]);
    expect(item("new-1")).toHaveTextContent("Untitled conversation");
  });
});

describe("renaming a conversation", () => {
  it("saves the new title on Enter via conversation_rename", async () => {
    const backend = threeConversations();
    const { user } = renderApp();
    await waitFor(() => expect(items()).toHaveLength(3));

    await user.click(within(item("c1")).getByTestId("rename-conversation"));
    const input = within(item("c1")).getByTestId("rename-input");
    expect(input).toHaveValue("Alpha");
    expect(input).toHaveFocus();
    await user.clear(input);
    await user.type(input, "Alpha, renamed{Enter}");

    await waitFor(() => expect(screen.queryByTestId("rename-input")).not.toBeInTheDocument());
    expect(backend.callsOf("conversation_rename")).toEqual([
      { cmd: "conversation_rename", args: { id: "c1", title: "Alpha, renamed" } },
    ]);
    expect(item("c1")).toHaveTextContent("Alpha, renamed");
    expect(ids()).toEqual(["c2", "c1", "c3"]);
    // Renaming does not open the conversation.
    expect(screen.queryByTestId("conversation-view")).not.toBeInTheDocument();
  });

  it("cancels on Escape without calling the backend", async () => {
    const backend = threeConversations();
    const { user } = renderApp();
    await waitFor(() => expect(items()).toHaveLength(3));

    await user.click(within(item("c2")).getByTestId("rename-conversation"));
    const input = within(item("c2")).getByTestId("rename-input");
    await user.type(input, " changed{Escape}");

    expect(screen.queryByTestId("rename-input")).not.toBeInTheDocument();
    expect(item("c2")).toHaveTextContent("Beta");
    expect(item("c2")).not.toHaveTextContent("changed");
    expect(backend.callsOf("conversation_rename")).toEqual([]);
  });

  it("updates the open conversation's heading", async () => {
    threeConversations();
    const { user } = renderApp();
    await waitFor(() => expect(items()).toHaveLength(3));
    await user.click(item("c3"));
    expect(await screen.findByTestId("conversation-title")).toHaveTextContent("Gamma");

    await user.click(within(item("c3")).getByTestId("rename-conversation"));
    const input = within(item("c3")).getByTestId("rename-input");
    await user.clear(input);
    await user.type(input, "Delta{Enter}");

    await waitFor(() => expect(screen.getByTestId("conversation-title")).toHaveTextContent("Delta"));
  });
});

describe("deleting a conversation", () => {
  it("soft-deletes at once and undo restores it in place", async () => {
    const backend = threeConversations();
    const { user } = renderApp();
    await waitFor(() => expect(items()).toHaveLength(3));

    await user.click(within(item("c1")).getByTestId("delete-conversation"));

    await waitFor(() => expect(ids()).toEqual(["c2", "c3"]));
    expect(backend.callsOf("conversation_delete")).toEqual([{ cmd: "conversation_delete", args: { id: "c1" } }]);
    // Clicking delete must not open the conversation first.
    expect(backend.callsOf("message_page")).toEqual([]);
    const bar = screen.getByTestId("undo-delete");
    expect(bar).toHaveTextContent("Deleted “Alpha”");

    await user.click(within(bar).getByTestId("undo-delete-button"));

    await waitFor(() => expect(ids()).toEqual(["c2", "c1", "c3"]));
    expect(backend.callsOf("conversation_restore")).toEqual([{ cmd: "conversation_restore", args: { id: "c1" } }]);
    expect(screen.queryByTestId("undo-delete")).not.toBeInTheDocument();
  });

  it("closes the open conversation on delete and reopens it on undo", async () => {
    threeConversations();
    const { user } = renderApp();
    await waitFor(() => expect(items()).toHaveLength(3));
    await user.click(item("c2"));
    expect(await screen.findByTestId("conversation-title")).toHaveTextContent("Beta");

    await user.click(within(item("c2")).getByTestId("delete-conversation"));
    await waitFor(() => expect(ids()).toEqual(["c1", "c3"]));
    expect(screen.getByTestId("empty-state")).toBeInTheDocument();

    await user.click(screen.getByTestId("undo-delete-button"));
    expect(await screen.findByTestId("conversation-title")).toHaveTextContent("Beta");
    expect(ids()).toEqual(["c2", "c1", "c3"]);
  });

  it("hides the undo bar when dismissed", async () => {
    const backend = threeConversations();
    const { user } = renderApp();
    await waitFor(() => expect(items()).toHaveLength(3));
    await user.click(within(item("c3")).getByTestId("delete-conversation"));
    await screen.findByTestId("undo-delete");

    await user.click(screen.getByTestId("undo-dismiss"));

    expect(screen.queryByTestId("undo-delete")).not.toBeInTheDocument();
    expect(backend.callsOf("conversation_restore")).toEqual([]);
    expect(ids()).toEqual(["c2", "c1"]);
  });
});

describe("a narrow window", () => {
  function narrowWindow() {
    const query = { matches: true, media: "(max-width: 999px)", addEventListener: () => {}, removeEventListener: () => {} };
    Object.defineProperty(window, "matchMedia", { configurable: true, value: () => query });
    return () => Reflect.deleteProperty(window, "matchMedia");
  }

  it("reaches the folded sidebar from the empty screen, and after creating folds it and puts focus in the task", async () => {
    const restore = narrowWindow();
    try {
      new FakeBackend({ providers: [LOCAL_PROVIDER] }).install();
      const { user } = renderApp();
      const body = () => document.querySelector(".app-body")!;
      await waitFor(() => expect(body()).toHaveAttribute("data-narrow", "true"));
      expect(body()).toHaveAttribute("data-sidebar", "hidden");
      const empty = await screen.findByTestId("empty-state");
      expect(empty).not.toHaveTextContent("on the left");
      await user.click(within(empty).getByTestId("empty-new-conversation"));
      expect(body()).toHaveAttribute("data-sidebar", "shown");
      await waitFor(() => expect(screen.getByTestId("new-conversation-title")).toHaveFocus());
      await user.type(screen.getByTestId("new-conversation-title"), "Q3 ledger{Enter}");
      await screen.findByTestId("conversation-view");
      expect(body()).toHaveAttribute("data-sidebar", "hidden");
      await waitFor(() => expect(screen.getByTestId("composer-input")).toHaveFocus());
    } finally {
      restore();
    }
  });
});
