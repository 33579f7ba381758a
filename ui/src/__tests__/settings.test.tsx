// Settings and the library (providers, keys, the sandbox, cards, the theme, export), the
// dialogs' keyboard and focus, the composer's keys and shortcuts, and changes made by another
// process, against the fake backend.
import { localDate } from "../components/ExportMenu";
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { setLanguage } from "../i18n";
import { backendWith, openC1 } from "../test/conversation";
import { conversation, message } from "../test/fixtures";
import { renderApp } from "../test/render";
import { openSettings, showSection } from "../test/settings";

beforeEach(async () => {
  await setLanguage("en");
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("settings and library", () => {
  it("adds, tests and removes a provider without ever showing its key, shows the sandbox, imports a card", async () => {
    const backend = backendWith();
    const { user } = renderApp();
    const dialog = await openSettings(user);

    // The add form is the first start's: the kind, the address, the model, the key, then Add and test.
    const form = within(dialog).getByTestId("provider-form");
    await user.type(within(form).getByTestId("setup-name"), "local");
    await user.type(within(form).getByTestId("setup-base-url"), "http://127.0.0.1:8080/v1");
    await user.type(within(form).getByTestId("setup-model"), "qwen3");
    await user.type(within(form).getByTestId("setup-key"), "sk-secret-123");
    expect(within(form).getByTestId("setup-key")).toHaveAttribute("type", "password");
    await user.click(within(form).getByTestId("setup-add"));
    await waitFor(() => expect(backend.callsOf("provider_add")).toHaveLength(1));
    expect(backend.callsOf("provider_add")[0]?.args).toEqual({
      name: "local",
      preset: null,
      protocol: "openai",
      baseUrl: "http://127.0.0.1:8080/v1",
      model: "qwen3",
      contextWindow: null,
      apiKey: "sk-secret-123",
    });
    const row = await within(dialog).findByTestId("provider");
    expect(row).toHaveTextContent("key in the keyring");
    expect(dialog).not.toHaveTextContent("sk-secret-123");
    // Tested as it was added, and said on its row; Settings does not make it the one runs use.
    expect(await within(row).findByTestId("provider-test-result")).toHaveTextContent("answered in 42 ms");
    expect(backend.callsOf("provider_test")).toHaveLength(1);
    expect(backend.callsOf("settings_save")).toHaveLength(0);
    // The form is empty again, for another.
    expect(within(dialog).getByTestId("setup-name")).toHaveValue("");

    await user.click(within(row).getByTestId("provider-test"));
    expect(await within(row).findByTestId("provider-test-result")).toHaveTextContent("answered in 42 ms");
    // The result is worded when shown: a language switch rewords it.
    await act(() => setLanguage("zh"));
    expect(within(row).getByTestId("provider-test-result")).not.toHaveTextContent("answered in");
    expect(within(row).getByTestId("provider-test-result")).toHaveTextContent("42 毫秒内应答");
    await act(() => setLanguage("en"));
    await user.click(within(row).getByTestId("provider-remove"));
    await waitFor(() => expect(within(dialog).queryByTestId("provider")).toBeNull());

    // The sandbox's state is in its section.
    expect(await within(await showSection(user, "sandbox")).findByTestId("sandbox-status")).toHaveTextContent("No Docker engine");

    // The presets runs take their prompt from are with what runs use.
    await showSection(user, "runs");
    const file = new File([new Uint8Array([123, 125])], "seraphina.json", { type: "application/json" });
    // The picker speaks the window's language, not the engine's ("Choose File").
    expect(within(dialog).getByTestId("preset-file-button")).toHaveTextContent("Choose a file…");
    expect(within(dialog).getByTestId("preset-file-chosen")).toHaveTextContent("No file chosen");
    await user.upload(within(dialog).getByTestId("preset-file"), file);
    expect(await within(dialog).findByTestId("preset-imported")).toHaveTextContent("Seraphina");
    expect(within(dialog).getByTestId("preset-file-chosen")).toHaveTextContent("seraphina.json");
    await act(() => setLanguage("zh"));
    expect(within(dialog).getByTestId("preset-file-button")).toHaveTextContent("选择文件…");
    expect(within(dialog).getByTestId("mcp-import-button")).toHaveTextContent("选择文件…");
    expect(within(dialog).getByTestId("mcp-import-chosen")).toHaveTextContent("未选择文件");
    await act(() => setLanguage("en"));
    expect(backend.callsOf("preset_import")[0]?.args).toEqual({ fileName: "seraphina.json", bytes: [123, 125] });
    expect(within(dialog).getAllByTestId("preset")).toHaveLength(1);
  });

  it("chooses the run's provider, the reviewer's and the sandbox, and sets a provider's thresholds", async () => {
    const backend = backendWith();
    backend.providers = [
      { name: "fast", model: "m", baseUrl: "http://a", contextWindow: 128000, hasApiKey: true },
      { name: "careful", model: "m", baseUrl: "http://b", contextWindow: 200000, hasApiKey: true },
    ];
    const { user } = renderApp();
    await openSettings(user, "runs");
    const runs = await screen.findByTestId("run-settings");
    expect(within(runs).getByTestId("run-provider")).toHaveValue("");
    // Two are set up and none is chosen: a run would not pick one by itself, and this says so.
    expect(within(runs).getByTestId("run-provider")).toHaveDisplayValue("None (several are set up: choose one)");

    await user.selectOptions(within(runs).getByTestId("run-provider"), "fast");
    await user.selectOptions(within(runs).getByTestId("reviewer-provider"), "careful");
    await waitFor(() => expect(within(runs).getByTestId("run-settings-saved")).toHaveTextContent("Saved."));

    // The sandbox is its own section, saved with the choices made in Runs (not over them).
    const sandbox = within(await showSection(user, "sandbox")).getByTestId("sandbox-settings");
    expect(within(sandbox).getByRole("radio", { name: "Host (the workspace folder)" })).toHaveAttribute("aria-checked", "true");
    await user.click(within(sandbox).getByRole("radio", { name: "Docker container" }));
    await waitFor(() => expect(backend.callsOf("settings_save")).toHaveLength(3));
    expect(backend.callsOf("settings_save")[2]?.args).toEqual({ provider: "fast", reviewerProvider: "careful", sandbox: "docker" });
    expect(within(sandbox).getByRole("radio", { name: "Docker container" })).toHaveAttribute("aria-checked", "true");
    expect(within(sandbox).getByTestId("sandbox-settings-saved")).toHaveTextContent("Saved.");
    // The engine's state stands beside the choice.
    expect(within(sandbox).getByTestId("sandbox-status")).toHaveTextContent("No Docker engine");
    // Back in Runs, the choices are as saved.
    await showSection(user, "runs");
    expect(within(runs).getByTestId("run-provider")).toHaveValue("fast");

    // Thresholds in percent; ones that do not increase are refused with the runtime's reason.
    await showSection(user, "models");
    const careful = screen.getAllByTestId("provider").find((r) => r.getAttribute("data-name") === "careful")!;
    const form = within(careful).getByTestId("thresholds");
    expect(within(form).getByTestId("threshold-warn")).toHaveValue("70");
    await user.clear(within(form).getByTestId("threshold-compress"));
    await user.type(within(form).getByTestId("threshold-compress"), "95");
    await user.click(within(form).getByTestId("thresholds-save"));
    // Said under the thresholds, inside the dialog, not in a banner behind it.
    expect(await within(form).findByTestId("thresholds-error")).toHaveTextContent("increasing");
    expect(screen.queryByTestId("error-banner")).toBeNull();
    expect(backend.providers[1]?.thresholds).toBeUndefined();

    await user.clear(within(form).getByTestId("threshold-compress"));
    await user.type(within(form).getByTestId("threshold-compress"), "80");
    await user.click(within(form).getByTestId("threshold-enabled"));
    await user.click(within(form).getByTestId("thresholds-save"));
    await waitFor(() => expect(backend.providers[1]?.thresholds).toEqual({ warn: 0.7, compress: 0.8, deep: 0.9, enabled: false }));
    expect(backend.callsOf("provider_thresholds_save")[1]?.args).toEqual({
      name: "careful",
      thresholds: { warn: 0.7, compress: 0.8, deep: 0.9, enabled: false },
    });    expect(within(careful).queryByTestId("thresholds-error")).toBeNull();
  });

  it("keeps showing a saved provider that was removed, so the user sees what to fix", async () => {
    const backend = backendWith();
    backend.settings = { provider: "gone", reviewerProvider: null, sandbox: "host" };
    const { user } = renderApp();
    await openSettings(user, "runs");
    const runs = await screen.findByTestId("run-settings");
    expect(within(runs).getByTestId("run-provider")).toHaveValue("gone");
    await user.selectOptions(within(runs).getByTestId("run-provider"), "");
    await waitFor(() => expect(backend.settings.provider).toBeNull());
  });

  it("switches the theme and keeps it", async () => {
    backendWith();
    const { user } = renderApp();
    await openSettings(user, "appearance");
    await user.click(within(screen.getByTestId("theme-switch")).getByRole("button", { name: "Dark" }));
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect(window.localStorage.getItem("decima.theme")).toBe("dark");
    await user.click(within(screen.getByTestId("theme-switch")).getByRole("button", { name: "Light" }));
    expect(document.documentElement.dataset.theme).toBe("light");
  });

  it("exports through the save dialog, then opens the file or shows its folder", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    await user.click(screen.getByTestId("export-button"));
    expect(screen.getByRole("menu")).toBeInTheDocument();
    await user.click(screen.getByTestId("export-jsonl"));
    // The menu closes once a format is picked.
    expect(screen.queryByRole("menu")).not.toBeInTheDocument();
    const today = localDate();
    expect(await screen.findByTestId("export-done")).toHaveTextContent(
      `2 messages written to /home/ana/Documents/c1 ${today}.jsonl`,
    );
    expect(backend.callsOf("conversation_export")[0]?.args).toEqual({
      conversationId: "c1",
      format: "jsonl",
      today,
      dialogTitle: "Export the conversation",
    });
    expect(today).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    await user.click(screen.getByTestId("export-open"));
    await user.click(screen.getByTestId("export-reveal"));
    const path = `/home/ana/Documents/c1 ${today}.jsonl`;
    expect(backend.callsOf("export_open")[0]?.args).toEqual({ path });
    expect(backend.callsOf("export_reveal")[0]?.args).toEqual({ path });
    await user.click(screen.getByTestId("export-dismiss"));
    expect(screen.queryByTestId("export-done")).not.toBeInTheDocument();
  });

  it("exports the session as a notebook that runs again, named in both languages", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    await user.click(screen.getByTestId("export-button"));
    expect(screen.getByTestId("export-ipynb")).toHaveTextContent("Jupyter notebook (runs again)");
    await user.click(screen.getByTestId("export-ipynb"));
    const today = localDate();
    expect(await screen.findByTestId("export-done")).toHaveTextContent(`/home/ana/Documents/c1 ${today}.ipynb`);
    expect(backend.callsOf("conversation_export")[0]?.args).toMatchObject({ conversationId: "c1", format: "ipynb" });
    await act(() => setLanguage("zh"));
    await user.click(screen.getByTestId("export-button"));
    expect(screen.getByTestId("export-ipynb")).toHaveTextContent("Jupyter 笔记本");
    await act(() => setLanguage("en"));
  });

  it("says nothing when the save dialog is cancelled, and shows a failure beside the export", async () => {
    const backend = backendWith();
    backend.exportCancelled = true;
    const { user } = await openC1();
    await user.click(screen.getByTestId("export-button"));
    await user.click(screen.getByTestId("export-md"));
    await waitFor(() => expect(backend.callsOf("conversation_export")).toHaveLength(1));
    expect(screen.queryByTestId("export-done")).not.toBeInTheDocument();
    backend.fail("conversation_export", { code: "invalid_input", message: "cannot create /data/exports: read-only file system" });
    await user.click(screen.getByTestId("export-button"));
    await user.click(screen.getByTestId("export-md"));
    expect(await screen.findByTestId("export-error")).toHaveTextContent("The export failed: cannot create /data/exports");
    expect(screen.queryByTestId("error-banner")).not.toBeInTheDocument();
  });

  it("closes the export menu on Escape, on a press outside and when a dialog opens", async () => {
    backendWith();
    const { user } = await openC1();
    const trigger = screen.getByTestId("export-button");
    await user.click(trigger);
    expect(screen.getByRole("menu")).toBeInTheDocument();
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("menu")).not.toBeInTheDocument();
    expect(trigger).toHaveFocus();
    await user.click(trigger);
    await user.click(screen.getByTestId("app-name"));
    expect(screen.queryByRole("menu")).not.toBeInTheDocument();
    await user.click(trigger);
    await user.click(screen.getByRole("button", { name: "Settings" }));
    expect(screen.queryByRole("menu")).not.toBeInTheDocument();
  });

  it("moves focus into Settings, keeps it there, and gives it back on Escape", async () => {
    backendWith();
    const { user } = renderApp();
    const opener = await screen.findByRole("button", { name: "Settings" });
    await user.click(opener);
    const dialog = screen.getByRole("dialog", { name: "Settings" });
    await waitFor(() => expect(dialog.contains(document.activeElement)).toBe(true));
    for (let i = 0; i < 30; i++) {
      await user.tab();
      expect(dialog.contains(document.activeElement)).toBe(true);
    }
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("dialog", { name: "Settings" })).not.toBeInTheDocument();
    expect(opener).toHaveFocus();
  });

  it("closes the review sheet on Escape and gives focus back", async () => {
    backendWith();
    const { user } = await openC1();
    const review = screen.getByTestId("tenth-man-review-button");
    await user.click(review);
    const sheet = screen.getByRole("dialog", { name: "Tenth man review" });
    await waitFor(() => expect(sheet.contains(document.activeElement)).toBe(true));
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("tenth-man-review-dialog")).not.toBeInTheDocument();
    expect(review).toHaveFocus();
  });

  it("says inline that no provider is set up, in the window's words, with no error banner", async () => {
    const backend = backendWith();
    backend.noProviderForUsage = true;
    await openC1();
    expect(await screen.findByTestId("context-no-provider")).toHaveTextContent("No model provider yet: add one in Settings.");
    expect(screen.queryByTestId("error-banner")).not.toBeInTheDocument();
    expect(screen.queryByTestId("context-usage")).not.toBeInTheDocument();
  });

  it("says where each key is kept: the keyring, or the file only the analyst can read", async () => {
    const backend = backendWith();
    backend.providers = [
      { name: "kept", model: "m", baseUrl: "http://a", contextWindow: 128000, hasApiKey: true },
      { name: "filed", model: "m", baseUrl: "http://b", contextWindow: 128000, hasApiKey: true, keyFile: "/home/ana/.local/share/decima/secrets.json" },
      { name: "bare", model: "m", baseUrl: "http://c", contextWindow: 128000, hasApiKey: false },
    ];
    const { user } = renderApp();
    await user.click(await screen.findByRole("button", { name: "Settings" }));
    const key = async (name: string) =>
      within((await screen.findAllByTestId("provider")).find((p) => p.dataset.name === name)!).getByTestId("provider-key-place");
    expect(await key("kept")).toHaveTextContent("key in the keyring");
    expect(await key("filed")).toHaveTextContent(
      "key in /home/ana/.local/share/decima/secrets.json, a file only you can read (this machine has no keyring service)",
    );
    expect(await key("filed")).not.toHaveTextContent("keyring service)key in the keyring");
    expect(await key("bare")).toHaveTextContent("no key");
  });

  it("says a failed provider test in one plain sentence, in the window's language, with the details folded", async () => {
    const backend = backendWith();
    backend.providers = [{ name: "local", model: "m", baseUrl: "http://127.0.0.1:9/v1", contextWindow: 128000, hasApiKey: false }];
    backend.probeFailure = {
      kind: "unreachable",
      url: "http://127.0.0.1:9/v1",
      status: null,
      detail: "cannot reach local at http://127.0.0.1:9/v1/chat/completions: connection refused",
    };
    const { user } = renderApp();
    await user.click(await screen.findByRole("button", { name: "Settings" }));
    const row = await screen.findByTestId("provider");
    await user.click(within(row).getByTestId("provider-test"));
    const result = await within(row).findByTestId("provider-test-result");
    expect(result).toHaveAttribute("data-state", "failed");
    expect(result).toHaveTextContent("Nothing answered at http://127.0.0.1:9/v1: is the server running?");
    const details = within(result).getByText("Details").closest("details")!;
    expect(details).not.toHaveAttribute("open");
    expect(details).toHaveTextContent("connection refused");
    await act(() => setLanguage("zh"));
    await user.click(within(row).getByTestId("provider-test"));
    await waitFor(() => expect(within(row).getByTestId("provider-test-result")).toHaveTextContent("http://127.0.0.1:9/v1 没有应答：服务器在运行吗？"));
    await act(() => setLanguage("en"));
  });

  it("sends with Enter and adds a line with Shift+Enter, or sends with Ctrl+Enter when chosen; never mid-composition", async () => {
    window.localStorage.removeItem("decima.sendKey");
    const backend = backendWith();
    const { user } = await openC1();
    const box = screen.getByRole("textbox", { name: "Task" });
    expect(box).toHaveAttribute("placeholder", "What should the agent do? (Enter sends, Shift+Enter adds a line)");
    await user.type(box, "count{Shift>}{Enter}{/Shift}the invoices");
    expect(box).toHaveValue("count\nthe invoices");
    // An Enter that confirms an input method's composition (Chinese) does not send.
    fireEvent.keyDown(box, { key: "Enter", keyCode: 229, isComposing: true });
    expect(backend.callsOf("run_start")).toHaveLength(0);
    await user.keyboard("{Enter}");
    await waitFor(() => expect(backend.callsOf("run_start")).toHaveLength(1));
    expect(backend.callsOf("run_start")[0]?.args).toMatchObject({ task: "count\nthe invoices" });
  });

  it("takes Ctrl+Enter to send once chosen in Settings, and Enter then adds a line", async () => {
    window.localStorage.removeItem("decima.sendKey");
    const backend = backendWith();
    const { user } = await openC1();
    await openSettings(user, "appearance");
    await user.click(within(screen.getByTestId("send-key-switch")).getByRole("button", { name: "Ctrl+Enter sends" }));
    await user.keyboard("{Escape}");
    const box = screen.getByRole("textbox", { name: "Task" });
    await user.type(box, "one{Enter}two");
    expect(box).toHaveValue("one\ntwo");
    expect(backend.callsOf("run_start")).toHaveLength(0);
    await user.keyboard("{Control>}{Enter}{/Control}");
    await waitFor(() => expect(backend.callsOf("run_start")).toHaveLength(1));
    window.localStorage.removeItem("decima.sendKey");
  });

  it("counts tokens the same way in the sidebar and the header, in both languages", async () => {
    const backend = backendWith();
    backend.conversations[0] = { ...backend.conversations[0]!, tokens: 12345 };
    await openC1();
    const item = (await screen.findAllByTestId("conversation-item")).find((e) => e.dataset.conversationId === "c1")!;
    const header = screen.getByTestId("conversation-tokens");
    expect(header).toHaveTextContent("12.3K tokens");
    expect(item).toHaveTextContent("12.3K tokens");
    expect(header).toHaveAttribute("title", "12,345 tokens");
    await act(() => setLanguage("zh"));
    const zhHeader = screen.getByTestId("conversation-tokens").textContent ?? "";
    expect(zhHeader).toMatch(/万|千/);
    expect(item).toHaveTextContent(zhHeader);
    await act(() => setLanguage("en"));
  });

  it("answers the keyboard shortcuts: new conversation, the task field, stop, and their list", async () => {
    const backend = backendWith();
    const { user } = await openC1();
    await user.keyboard("{Control>}n{/Control}");
    await waitFor(() => expect(screen.getByTestId("new-conversation-title")).toHaveFocus());
    await user.keyboard("{Shift>}{Escape}{/Shift}");
    await waitFor(() => expect(screen.getByRole("textbox", { name: "Task" })).toHaveFocus());
    await user.keyboard("go{Enter}");
    await waitFor(() => expect(backend.channels).toHaveLength(1));
    await user.keyboard("{Control>}.{/Control}");
    await waitFor(() => expect(backend.callsOf("run_stop")).toHaveLength(1));
    await user.keyboard("{Control>}/{/Control}");
    const list = await screen.findByRole("dialog", { name: "Keyboard shortcuts" });
    expect(within(list).getAllByTestId("shortcut").map((s) => s.textContent)).toEqual([
      "Ctrl+NNew conversation",
      "Shift+EscGo to the task field",
      "Ctrl+.Stop the run",
      "Ctrl+FFind in this conversation",
      "Ctrl+KSearch all conversations",
      "Ctrl+,Open Settings",
      "Ctrl+/Show these shortcuts",
    ]);
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("dialog", { name: "Keyboard shortcuts" })).toBeNull();
  });

  it("shows what another process changed without a reload: a new conversation and new messages", async () => {
    const backend = backendWith();
    await openC1();
    backend.conversations.push(conversation({ id: "c9", title: "Imported by the CLI", messageCount: 1 }));
    backend.messages.c1 = [...backend.messages.c1!, message({ id: "m3", seq: 3, role: "assistant", content: "Written by the CLI's run" })];
    backend.conversations[0] = { ...backend.conversations[0]!, messageCount: 3 };
    expect(await screen.findByText("Imported by the CLI", {}, { timeout: 6000 })).toBeInTheDocument();
    expect(await screen.findByText("Written by the CLI's run", {}, { timeout: 6000 })).toBeInTheDocument();
  }, 15000);
});
