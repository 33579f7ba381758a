import { mockIPC } from "@tauri-apps/api/mocks";
import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { FakeBackend } from "../test/fakeBackend";
import { LOCAL_PROVIDER, conversation } from "../test/fixtures";
import { renderApp } from "../test/render";

describe("backend errors", () => {
  it("says under the form why create failed, keeps the typed title, and clears the error on success", async () => {
    const backend = new FakeBackend({ conversations: [conversation({ id: "c1", title: "Old" })], providers: [LOCAL_PROVIDER] }).install();
    backend.fail("conversation_create", { code: "storage", message: "disk full" });
    const { user } = renderApp();
    await screen.findByTestId("conversation-item");

    const input = screen.getByTestId("new-conversation-title");
    await user.type(input, "Keep me");
    await user.click(screen.getByTestId("new-conversation-submit"));

    const error = await screen.findByTestId("new-conversation-error");
    expect(error).toHaveTextContent("disk full");
    expect(error).toHaveTextContent("Storage error");
    expect(error).toHaveAttribute("role", "alert");
    expect(screen.queryByTestId("error-banner")).not.toBeInTheDocument();
    expect(input).toHaveValue("Keep me");
    expect(screen.getAllByTestId("conversation-item")).toHaveLength(1);
    expect(screen.getByTestId("empty-state")).toBeInTheDocument();

    // The kept text can be submitted again once the backend recovers; the error goes.
    backend.succeed("conversation_create");
    await user.click(screen.getByTestId("new-conversation-submit"));
    await waitFor(() => expect(screen.getAllByTestId("conversation-item")).toHaveLength(2));
    expect(screen.queryByTestId("new-conversation-error")).not.toBeInTheDocument();
    expect(backend.callsOf("conversation_create").map((c) => c.args)).toEqual([
      { title: "Keep me" },
      { title: "Keep me" },
    ]);
    expect(input).toHaveValue("");
  });

  it("shows the banner when the list cannot be loaded", async () => {
    const backend = new FakeBackend();
    backend.fail("conversation_list", { code: "internal", message: "database is locked" });
    backend.install();
    renderApp();
    expect(await screen.findByTestId("error-banner")).toHaveTextContent("database is locked");
  });

  it("keeps the rename editor and its text open when rename fails", async () => {
    const backend = new FakeBackend({ conversations: [conversation({ id: "c1", title: "Old" })] }).install();
    backend.fail("conversation_rename", { code: "invalid_input", message: "title too long" });
    const { user } = renderApp();
    const item = await screen.findByTestId("conversation-item");

    await user.click(within(item).getByTestId("rename-conversation"));
    const input = within(item).getByTestId("rename-input");
    await user.clear(input);
    await user.type(input, "New name{Enter}");

    expect(await within(item).findByTestId("rename-error")).toHaveTextContent("title too long");
    expect(screen.queryByTestId("error-banner")).not.toBeInTheDocument();
    expect(within(item).getByTestId("rename-input")).toHaveValue("New name");
    expect(backend.callsOf("conversation_rename")).toHaveLength(1);

    // Typing again clears it; a save that works closes the editor.
    backend.succeed("conversation_rename");
    await user.type(within(item).getByTestId("rename-input"), "!");
    expect(within(item).queryByTestId("rename-error")).not.toBeInTheDocument();
    await user.keyboard("{Enter}");
    await waitFor(() => expect(within(item).queryByTestId("rename-input")).not.toBeInTheDocument());
  });

  it("keeps the item when delete fails", async () => {
    const backend = new FakeBackend({ conversations: [conversation({ id: "c1", title: "Stay" })] }).install();
    backend.fail("conversation_delete", { code: "not_found", message: "gone already" });
    const { user } = renderApp();
    const item = await screen.findByTestId("conversation-item");

    await user.click(within(item).getByTestId("delete-conversation"));

    expect(await within(item).findByTestId("delete-error")).toHaveTextContent("gone already");
    expect(screen.queryByTestId("error-banner")).not.toBeInTheDocument();
    expect(screen.getByTestId("conversation-item")).toHaveTextContent("Stay");
    expect(screen.queryByTestId("undo-delete")).not.toBeInTheDocument();
  });

  it("reports a broken IPC bridge (a thrown Error) as an internal error", async () => {
    mockIPC(() => {
      throw new Error("IPC bridge unavailable");
    });
    renderApp();
    const banner = await screen.findByTestId("error-banner");
    expect(banner).toHaveTextContent("IPC bridge unavailable");
    expect(banner).toHaveAttribute("data-error-code", "internal");
  });
});
