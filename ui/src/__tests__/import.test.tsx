import { act, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { FakeBackend } from "../test/fakeBackend";
import { conversation, message } from "../test/fixtures";
import { renderApp } from "../test/render";

const LEDGER = [message({ id: "i1", seq: 1, content: "Which invoices differ?" }), message({ id: "i2", seq: 2, role: "assistant", content: "Three do." })];

function backend() {
  return new FakeBackend({ conversations: [conversation({ id: "c1", title: "Alpha" })] }).install();
}

describe("importing conversations", () => {
  it("imports the file picked in the open dialog and opens it", async () => {
    const b = backend();
    b.picked = { title: "Q3 ledger 2026-11-26", messages: LEDGER };
    const { user } = renderApp();
    await screen.findAllByTestId("conversation-item");
    await user.click(screen.getByTestId("import-button"));
    await waitFor(() => expect(screen.getByTestId("conversation-title")).toHaveTextContent("Q3 ledger 2026-11-26"));
    expect(await screen.findByText("Three do.")).toBeInTheDocument();
    expect(screen.getAllByTestId("conversation-item")).toHaveLength(2);
    // The dialog is worded in the window's language.
    expect(b.callsOf("conversation_import")[0]?.args).toEqual({
      dialogTitle: "Import a conversation",
      filterName: "Conversation history (JSONL)",
    });
    expect(screen.queryByTestId("import-notice")).toBeNull();
  });

  it("says beside the button why a picked file was refused, and nothing is added", async () => {
    const b = backend();
    b.picked = { code: "invalid_input", message: "ledger.jsonl, line 3: not a valid chat message" };
    const { user } = renderApp();
    await screen.findAllByTestId("conversation-item");
    await user.click(screen.getByTestId("import-button"));
    const notice = await screen.findByTestId("import-notice");
    expect(notice).toHaveAttribute("role", "alert");
    expect(notice).toHaveTextContent("ledger.jsonl, line 3: not a valid chat message");
    expect(screen.getAllByTestId("conversation-item")).toHaveLength(1);
    expect(screen.queryByTestId("error-banner")).toBeNull();
    await user.click(within(notice).getByRole("button", { name: "Dismiss" }));
    expect(screen.queryByTestId("import-notice")).toBeNull();
  });

  it("imports dropped files one by one: a bad file is named, the good one opens", async () => {
    const b = backend();
    b.droppable = {
      "/home/a/ledger.jsonl": { title: "ledger", messages: LEDGER },
      "/home/a/notes.md": "notes.md is not a conversation history: Decima imports .jsonl files",
    };
    renderApp();
    await screen.findAllByTestId("conversation-item");
    // Files over the window: it says where they go.
    await waitFor(() => expect(b.dragWatcher).not.toBeNull());
    act(() => b.drag({ type: "entered" }));
    expect(await screen.findByTestId("drop-overlay")).toHaveTextContent("Drop .jsonl files");
    act(() => b.drag({ type: "dropped", paths: ["/home/a/ledger.jsonl", "/home/a/notes.md"], x: 0, y: 0 }));
    await waitFor(() => expect(screen.queryByTestId("drop-overlay")).toBeNull());
    expect(b.callsOf("conversation_import_dropped")[0]?.args).toEqual({
      paths: ["/home/a/ledger.jsonl", "/home/a/notes.md"],
    });
    await waitFor(() => expect(screen.getByTestId("conversation-title")).toHaveTextContent("ledger"));
    const notice = await screen.findByTestId("import-notice");
    expect(notice).toHaveTextContent("Imported 1 conversation.");
    expect(within(notice).getByTestId("import-error")).toHaveTextContent("notes.md: notes.md is not a conversation history");

    // A drag that leaves takes its overlay with it.
    act(() => b.drag({ type: "entered" }));
    await screen.findByTestId("drop-overlay");
    act(() => b.drag({ type: "left" }));
    await waitFor(() => expect(screen.queryByTestId("drop-overlay")).toBeNull());
  });
});
