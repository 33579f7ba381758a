import { screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { setLanguage } from "../i18n";
import { FakeBackend } from "../test/fakeBackend";
import { conversation, message } from "../test/fixtures";
import { renderApp } from "../test/render";

beforeEach(async () => {
  await setLanguage("en");
});

afterEach(() => {
  vi.restoreAllMocks();
});

const CHAT = [
  message({ id: "m1", seq: 1, role: "user", content: "Count the invoices" }),
  message({ id: "m2", seq: 2, role: "assistant", content: "There are 12.\n\n```sql\nselect count(*) from invoices;\n```" }),
  message({ id: "m3", seq: 3, role: "user", content: "Only the unpaid ones" }),
  message({ id: "m4", seq: 4, role: "assistant", content: "3 are unpaid." }),
];

const TABLE = "By region:\n\n| region | unpaid |\n| --- | ---: |\n| North | 1,204.50 |\n| East | 2 310 |";

async function openChat() {
  const backend = new FakeBackend({
    conversations: [conversation({ id: "c1", title: "Invoices", messageCount: 4 })],
    messages: { c1: [...CHAT] },
  }).install();
  // user-event puts its own clipboard on the navigator; what is copied is read back from it.
  const rendered = renderApp();
  await rendered.user.click(await screen.findByTestId("conversation-item"));
  await screen.findByText("3 are unpaid.");
  return { backend, ...rendered };
}

const row = (seq: number) => screen.getAllByTestId("message").find((m) => m.getAttribute("data-seq") === String(seq))!;

describe("message actions", () => {
  it("copies a message and a code block", async () => {
    const { user } = await openChat();
    await user.click(within(row(4)).getByTestId("copy-message"));
    expect(await navigator.clipboard.readText()).toBe("3 are unpaid.");
    expect(within(row(4)).getByTestId("copy-message")).toHaveTextContent("Copied");
    await user.click(await within(row(2)).findByTestId("copy-code"));
    expect(await navigator.clipboard.readText()).toBe("select count(*) from invoices;");
  });

  it("copies a Markdown table as TSV, which pastes into a spreadsheet as cells", async () => {
    new FakeBackend({
      conversations: [conversation({ id: "c1", title: "Invoices", messageCount: 1 })],
      messages: { c1: [message({ id: "t1", seq: 1, role: "assistant", content: TABLE })] },
    }).install();
    const { user } = renderApp();
    await user.click(await screen.findByTestId("conversation-item"));
    await user.click(await screen.findByTestId("copy-table"));
    expect(await navigator.clipboard.readText()).toBe("region\tunpaid\nNorth\t1,204.50\nEast\t2 310");
  });

  it("offers edit on the last message sent and regenerate on its answer only", async () => {
    await openChat();
    expect(within(row(3)).getByTestId("message-edit")).toBeInTheDocument();
    expect(within(row(4)).getByTestId("message-regenerate")).toBeInTheDocument();
    for (const seq of [1, 2]) {
      expect(within(row(seq)).queryByTestId("message-edit")).toBeNull();
      expect(within(row(seq)).queryByTestId("message-regenerate")).toBeNull();
    }
  });

  it("edits the last message and runs again, after saying what is set aside", async () => {
    const { user, backend } = await openChat();
    await user.click(within(row(3)).getByTestId("message-edit"));
    const dialog = screen.getByRole("dialog", { name: "Edit your last message and run again" });
    expect(within(dialog).getByTestId("rerun-set-aside")).toHaveTextContent("2 messages from here on are set aside");
    const text = within(dialog).getByTestId("rerun-text");
    expect(text).toHaveValue("Only the unpaid ones");
    await user.clear(text);
    await user.type(text, "Only the unpaid ones from March");
    await user.click(within(dialog).getByTestId("rerun-confirm"));
    await waitFor(() => expect(screen.queryByTestId("rerun-dialog")).toBeNull());
    expect(backend.callsOf("run_start")[0]?.args).toMatchObject({
      conversationId: "c1",
      task: "Only the unpaid ones from March",
      rewindFrom: 3,
    });
    // The set-aside messages leave the list.
    await waitFor(() => expect(screen.queryByText("3 are unpaid.")).toBeNull());
  });

  it("regenerates the answer from the same message, and a refusal stays in the dialog", async () => {
    const { user, backend } = await openChat();
    backend.fail("run_start", { code: "busy", message: "a run in another window holds this conversation" });
    await user.click(within(row(4)).getByTestId("message-regenerate"));
    const dialog = screen.getByRole("dialog", { name: "Regenerate the answer" });
    await user.click(within(dialog).getByTestId("rerun-confirm"));
    expect(await within(dialog).findByTestId("rerun-error")).toHaveTextContent("another window");
    expect(screen.getByText("3 are unpaid.")).toBeInTheDocument();
    backend.succeed("run_start");
    await user.click(within(dialog).getByTestId("rerun-confirm"));
    await waitFor(() => expect(screen.queryByTestId("rerun-dialog")).toBeNull());
    expect(backend.callsOf("run_start").slice(-1)[0]?.args).toMatchObject({ task: "Only the unpaid ones", rewindFrom: 3 });
  });
});
