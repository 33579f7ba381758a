import { act, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { C1, backendWith, openC1, shownMessage, shownResult, startRun } from "../test/conversation";
import { conversation, message } from "../test/fixtures";

beforeEach(async () => {
  await setLanguage("en");
});

afterEach(() => {
  // jsdom has no layout: a test that drops somewhere says where by replacing this.
  delete (document as { elementFromPoint?: unknown }).elementFromPoint;
});

const AT = Date.parse("2026-03-01T11:58:00Z");

describe("the workspace panel", () => {
  it("lists what calls wrote, with the call, and previews a CSV as a table that can be saved", async () => {
    const backend = backendWith({
      workspaceFiles: {
        c1: [
          { path: "out/q3.png", size: 20480, modifiedMs: AT, writtenBy: { by: "call", callId: "call_7", messageSeq: null, tool: "shell", conversationId: "c1", atMs: AT } },
          { path: "sales.csv", size: 1200, modifiedMs: AT - 60_000, writtenBy: { by: "analyst", name: "sales.csv", atMs: AT } },
          { path: "sales (2).csv", size: 900, modifiedMs: AT - 120_000, writtenBy: { by: "analyst", name: "sales.csv", atMs: AT } },
        ],
      },
      previews: {
        "sales.csv": { kind: "table", columns: ["region", "net"], rows: [["North", "1200.5"]], more: true, columnsTotal: null, sheet: null, sheets: 1 },
      },
    });
    const { user } = await openC1();
    const panel = await screen.findByTestId("workspace-panel");
    const rows = await within(panel).findAllByTestId("workspace-file");
    expect(rows.map((r) => r.dataset.path)).toEqual(["out/q3.png", "sales.csv", "sales (2).csv"]);
    expect(within(rows[0]!).getByTestId("workspace-writer")).toHaveTextContent("written by shell");
    expect(within(rows[0]!).getByTestId("workspace-writer")).toHaveAttribute("data-call-id", "call_7");
    expect(rows[0]).toHaveTextContent("20 KB");
    expect(within(rows[1]!).getByTestId("workspace-writer")).toHaveTextContent(/^added by you$/);
    expect(within(rows[2]!).getByTestId("workspace-writer")).toHaveTextContent("added by you (was sales.csv)");
    expect(backend.callsOf("workspace_files")[0]?.args).toEqual({ conversationId: "c1", all: false });

    await user.click(within(rows[1]!).getByTestId("workspace-file-open"));
    const dialog = await screen.findByRole("dialog", { name: "sales.csv" });
    const table = await within(dialog).findByTestId("workspace-preview-table");
    expect(within(table).getAllByRole("columnheader").map((c) => c.textContent)).toEqual(["region", "net"]);
    expect(within(table).getByText("1,200.5")).toBeInTheDocument();
    expect(dialog).toHaveTextContent("The first 1 rows; the file holds more.");
    await user.click(within(dialog).getByTestId("workspace-save-as"));
    expect(await within(dialog).findByTestId("workspace-saved")).toHaveTextContent("Saved to /home/a/Documents/copy (2 KB).");
    expect(backend.callsOf("workspace_save_as")[0]?.args).toMatchObject({ conversationId: "c1", path: "sales.csv" });
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByRole("dialog", { name: "sales.csv" })).toBeNull());

    // Every file, on request.
    await user.click(within(panel).getByTestId("workspace-all"));
    await waitFor(() => expect(backend.callsOf("workspace_files").slice(-1)[0]?.args).toEqual({ conversationId: "c1", all: true }));
  });

  it("renders Markdown, draws an SVG chart and shows a workbook's first sheet as a table", async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20"/></svg>';
    backendWith({
      workspaceFiles: {
        c1: [
          { path: "notes.md", size: 80, modifiedMs: AT, writtenBy: null },
          { path: "chart.svg", size: svg.length, modifiedMs: AT, writtenBy: null },
          { path: "q3.xlsx", size: 9000, modifiedMs: AT, writtenBy: null },
        ],
      },
      previews: {
        "notes.md": { kind: "markdown", text: "# Findings\n\n- **EMEA** grew 12%\n", truncated: false },
        "chart.svg": { kind: "image", mediaType: "image/svg+xml", data: btoa(svg) },
        "q3.xlsx": {
          kind: "table",
          columns: ["region", "revenue"],
          rows: [["EMEA", "2550"], ["APAC", "1750.25"], ["Americas", "12040"]],
          more: false,
          columnsTotal: null,
          sheet: "Q3",
          sheets: 2,
        },
      },
    });
    const { user } = await openC1();
    const rows = await screen.findAllByTestId("workspace-file");
    const open = async (i: number, name: string) => {
      await user.click(within(rows[i]!).getByTestId("workspace-file-open"));
      return screen.findByRole("dialog", { name });
    };
    let dialog = await open(0, "notes.md");
    const markdown = await within(dialog).findByTestId("workspace-preview-markdown");
    expect(await within(markdown).findByRole("heading", { name: "Findings" })).toBeInTheDocument();
    expect(within(markdown).getByText("EMEA").tagName).toBe("STRONG");
    await user.click(within(dialog).getByTestId("workspace-preview-close"));

    dialog = await open(1, "chart.svg");
    const image = await within(dialog).findByTestId("workspace-preview-image");
    expect(image).toHaveAttribute("src", `data:image/svg+xml;base64,${btoa(svg)}`);
    expect(image.tagName).toBe("IMG");
    await user.click(within(dialog).getByTestId("workspace-preview-close"));

    dialog = await open(2, "q3.xlsx");
    expect(await within(dialog).findByTestId("workspace-preview-sheet")).toHaveTextContent("Q3");
    const table = within(dialog).getByTestId("workspace-preview-table");
    expect(within(table).getAllByRole("columnheader").map((c) => c.textContent)).toEqual(["region", "revenue"]);
    // Numbers right-aligned with separators, the row count, sorting and a filter.
    const cell = within(table).getByText("2,550");
    expect(cell).toHaveClass("numeric");
    expect(within(table).getByText("EMEA")).not.toHaveClass("numeric");
    expect(within(dialog).getByTestId("table-count")).toHaveTextContent("3 rows");
    const firstColumn = () => within(table).getAllByRole("row").slice(1).map((r) => r.firstElementChild?.textContent);
    await user.click(within(table).getAllByTestId("table-sort")[1]!);
    expect(firstColumn()).toEqual(["APAC", "EMEA", "Americas"]);
    expect(within(table).getAllByRole("columnheader")[1]).toHaveAttribute("aria-sort", "ascending");
    await user.click(within(table).getAllByTestId("table-sort")[1]!);
    expect(firstColumn()).toEqual(["Americas", "EMEA", "APAC"]);
    await user.type(within(dialog).getByTestId("table-filter"), "ap");
    expect(firstColumn()).toEqual(["APAC"]);
    expect(within(dialog).getByTestId("table-count")).toHaveTextContent("3 rows · 1 match");
    expect(within(dialog).getByTestId("table-copy-tsv")).toBeInTheDocument();
  });

  it("says why a file is not shown, and what went wrong reading one", async () => {
    backendWith({
      workspaceFiles: { c1: [{ path: "dump.bin", size: 3e9, modifiedMs: AT, writtenBy: null }, { path: "gone.txt", size: 1, modifiedMs: AT, writtenBy: null }] },
      previews: { "dump.bin": { kind: "none", reason: "tooLarge" } },
    });
    const { user } = await openC1();
    const rows = await screen.findAllByTestId("workspace-file");
    expect(rows[0]).toHaveTextContent("2.8 GB");
    await user.click(within(rows[0]!).getByTestId("workspace-file-open"));
    expect(await screen.findByTestId("workspace-preview-none")).toHaveTextContent("Too large to preview. Save a copy to open it.");
    await user.click(screen.getByTestId("workspace-preview-close"));
    await user.click(within(rows[1]!).getByTestId("workspace-file-open"));
    expect(await screen.findByTestId("workspace-preview-error")).toHaveTextContent("gone.txt is not in this conversation's workspace");
  });

  it("adds files dropped on the conversation and names them; a drop elsewhere imports", { timeout: 15_000 }, async () => {
    const backend = backendWith({ droppable: {}, conversations: [C1, conversation({ id: "c2", title: "Other" })] });
    const { user } = await openC1();
    await screen.findByTestId("workspace-empty");
    const view = screen.getByTestId("conversation-view");
    document.elementFromPoint = () => view;
    act(() => backend.drag({ type: "entered" }));
    expect(await screen.findByTestId("drop-overlay")).toHaveTextContent("Drop on the conversation to add the files to its workspace");
    act(() => backend.drag({ type: "dropped", paths: ["/home/a/q3 sales.csv"], x: 600, y: 400 }));
    expect(await screen.findByTestId("workspace-added")).toHaveTextContent(
      "Added q3 sales.csv: it is named to the agent with your next message.",
    );
    expect(backend.callsOf("workspace_add_dropped")[0]?.args).toEqual({ conversationId: "c1", paths: ["/home/a/q3 sales.csv"] });
    expect(await screen.findAllByTestId("workspace-file")).toHaveLength(1);
    expect(backend.callsOf("conversation_import_dropped")).toEqual([]);

    // The notice is the store's state: a language switch, or leaving and reopening the
    // conversation, keeps it while the file waits to be named.
    await act(() => setLanguage("zh"));
    expect(await screen.findByTestId("workspace-added")).toHaveTextContent("q3 sales.csv");
    await act(() => setLanguage("en"));
    const item = (id: string) => screen.getAllByTestId("conversation-item").find((e) => e.getAttribute("data-conversation-id") === id)!;
    await user.click(item("c2"));
    await waitFor(() => expect(screen.getByTestId("conversation-view")).toHaveAttribute("data-conversation-id", "c2"));
    await user.click(item("c1"));
    expect(await screen.findByTestId("workspace-added")).toHaveTextContent("q3 sales.csv");

    // The run's message names the file: the notice goes once it starts, and does not come
    // back on reopening the conversation or switching the language.
    await startRun(backend, user, "Chart it");
    await waitFor(() => expect(screen.queryByTestId("workspace-added")).toBeNull());
    await act(() => setLanguage("zh"));
    await act(() => setLanguage("en"));
    expect(screen.queryByTestId("workspace-added")).toBeNull();
    await user.click(item("c2"));
    await waitFor(() => expect(screen.getByTestId("conversation-view")).toHaveAttribute("data-conversation-id", "c2"));
    await user.click(item("c1"));
    await screen.findAllByTestId("workspace-file");
    expect(screen.queryByTestId("workspace-added")).toBeNull();

    document.elementFromPoint = () => screen.getAllByTestId("conversation-item")[0]!;
    act(() => backend.drag({ type: "dropped", paths: ["/home/a/ledger.jsonl"], x: 40, y: 200 }));
    await waitFor(() => expect(backend.callsOf("conversation_import_dropped")).toHaveLength(1));
    expect(backend.callsOf("workspace_add_dropped")).toHaveLength(1);
  });
});

describe("files waiting to be named", () => {
  it("are said from the store's state: after a restart too, and not once a message named them", async () => {
    const backend = backendWith({ workspaceFiles: { c1: [{ path: "ledger.csv", size: 10, modifiedMs: AT, writtenBy: null }] } });
    backend.pendingAnnouncement = { c1: ["ledger.csv"] };
    const { user } = await openC1();
    expect(await screen.findByTestId("workspace-added")).toHaveTextContent("Added ledger.csv");
    await startRun(backend, user, "Chart it");
    await waitFor(() => expect(screen.queryByTestId("workspace-added")).toBeNull());
  });
});

describe("the call that wrote a file", () => {
  it("is brought into view and marked from the panel", async () => {
    const backend = backendWith({
      messages: {
        c1: [
          message({ id: "m1", seq: 1, content: "Chart it" }),
          message({ id: "m2", seq: 2, role: "assistant", content: "", toolCalls: [{ id: "call_7", name: "shell", arguments: "{}" }] }),
          message({ id: "m3", seq: 3, role: "tool", name: "shell", toolCallId: "call_7", content: "saved" }),
          message({ id: "m4", seq: 4, role: "assistant", content: "Charted." }),
        ],
      },
      workspaceFiles: {
        c1: [{ path: "chart.png", size: 70, modifiedMs: AT, writtenBy: { by: "call", callId: "call_7", messageSeq: 2, tool: "shell", conversationId: "c1", atMs: AT } }],
      },
    });
    const { user } = await openC1("Charted.");
    await user.click(await screen.findByTestId("workspace-writer"));
    await waitFor(() => expect(backend.callsOf("tool_result_seq")[0]?.args).toEqual({ conversationId: "c1", callId: "call_7", afterSeq: 2 }));
    // The result is on its call's card: the row and the result on it are marked.
    await waitFor(() => expect(shownMessage(3)).toHaveAttribute("data-highlighted", "true"));
    expect(shownMessage(3)).toHaveAttribute("data-seq", "2");
    expect(shownResult(3)).toHaveAttribute("data-highlighted", "true");
  });
});

describe("a call id a server used at every step", () => {
  it("links each file to the call of its own answer, and says when that step was set aside", async () => {
    const call0 = (seq: number) => [
      message({ id: `a${seq}`, seq, role: "assistant", content: "", toolCalls: [{ id: "call_0", name: "shell", arguments: "{}" }] }),
      message({ id: `r${seq}`, seq: seq + 1, role: "tool", name: "shell", toolCallId: "call_0", content: `step ${seq}` }),
    ];
    const writer = (seq: number) => ({ by: "call" as const, callId: "call_0", messageSeq: seq, tool: "shell", conversationId: "c1", atMs: AT });
    const backend = backendWith({
      messages: { c1: [message({ id: "m1", seq: 1, content: "Chart it" }), ...call0(2), ...call0(4), ...call0(6), message({ id: "m8", seq: 8, role: "assistant", content: "Charted." })] },
      workspaceFiles: {
        c1: [
          { path: "chart.png", size: 70, modifiedMs: AT, writtenBy: writer(4) },
          { path: "gone.csv", size: 70, modifiedMs: AT, writtenBy: writer(10) },
        ],
      },
    });
    const { user } = await openC1("Charted.");
    const writers = await screen.findAllByTestId("workspace-writer");
    await user.click(writers[0]!);
    // The result of the second step's call_0, not the newest call_0.
    await waitFor(() => expect(shownResult(5)).toHaveAttribute("data-highlighted", "true"));
    expect(shownMessage(5)).toHaveAttribute("data-seq", "4");
    await user.click(writers[1]!);
    expect(await screen.findByText(/was set aside/)).toBeInTheDocument();
    expect(backend.callsOf("tool_result_seq")[1]?.args).toEqual({ conversationId: "c1", callId: "call_0", afterSeq: 10 });
  });
});

describe("the workspace panel in Chinese", () => {
  it("words its list and notices in Chinese", async () => {
    await setLanguage("zh");
    backendWith({ workspaceFiles: { c1: [{ path: "图表.png", size: 2048, modifiedMs: AT, writtenBy: { by: "call", callId: "c", messageSeq: null, tool: "shell", conversationId: "c1", atMs: AT } }] } });
    await openC1();
    const panel = await screen.findByTestId("workspace-panel");
    expect(panel).toHaveTextContent("工作区");
    expect(await within(panel).findByTestId("workspace-writer")).toHaveTextContent("由 shell 写入");
    expect(within(panel).getByTestId("workspace-add")).toHaveTextContent("添加文件…");
  });
});
