// A provider's window as the server reports it (or the preset's, or the configured one), in
// Settings and after a connection test, in Settings and at the first start.
import { act, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { backendWith } from "../test/conversation";
import { FakeBackend } from "../test/fakeBackend";
import { renderApp } from "../test/render";

beforeEach(async () => {
  await setLanguage("en");
});

const WARNING = "the window is set to 32,768 tokens, but llama.cpp serves 8,192 for this model; requests are fitted to 8,192";

function withProviders() {
  const backend = backendWith();
  backend.providers = [
    { name: "llama", model: "qwen3", baseUrl: "http://127.0.0.1:8080/v1", contextWindow: 8192, hasApiKey: false, contextWindowSource: "served", servedWindow: 8192 },
    { name: "hosted", model: "gpt", baseUrl: "https://api.example.org/v1", contextWindow: 32768, hasApiKey: true, contextWindowSource: "preset" },
    { name: "mine", model: "m", baseUrl: "http://10.0.0.2/v1", contextWindow: 16000, hasApiKey: false, contextWindowSource: "configured" },
  ];
  return backend;
}

async function openSettings(user: ReturnType<typeof renderApp>["user"]) {
  await user.click(await screen.findByRole("button", { name: "Settings" }));
  return screen.getByRole("dialog", { name: "Settings" });
}

async function row(name: string) {
  return waitFor(() => {
    const found = screen.getAllByTestId("provider").find((p) => p.dataset.name === name);
    if (!found) throw new Error(`no provider ${name}`);
    return found;
  });
}

describe("the window in Settings", () => {
  it("says where each provider's window comes from, in English and Chinese", async () => {
    withProviders();
    const { user } = renderApp();
    await openSettings(user);
    const source = async (name: string) => within(await row(name)).getByTestId("provider-window-source");
    expect(await source("llama")).toHaveTextContent("Context window: 8,192 tokens, as the server reports");
    expect(await source("hosted")).toHaveTextContent("Context window: 32,768 tokens, the preset's (the server does not say)");
    expect(await source("mine")).toHaveTextContent("Context window: 16,000 tokens, as configured");

    await act(() => setLanguage("zh"));
    expect(await source("llama")).toHaveTextContent("上下文窗口：8,192 个 token，由服务器报告");
    expect(await source("hosted")).toHaveTextContent("上下文窗口：32,768 个 token，取自预设（服务器未告知）");
    expect(await source("mine")).toHaveTextContent("上下文窗口：16,000 个 token，按配置");
    await act(() => setLanguage("en"));
  });

  it("keeps the window to edit where the server does not say it, and says where it comes from", async () => {
    const backend = withProviders();
    const { user } = renderApp();
    await openSettings(user);
    const hosted = await row("hosted");
    await user.click(within(hosted).getByTestId("provider-edit"));
    const editor = within(hosted).getByTestId("provider-editor");
    expect(within(editor).getByTestId("edit-window-source")).toHaveTextContent(
      "32,768 tokens, the preset's (the server does not say) The server does not say its window: set it here if you know it.",
    );
    const field = within(editor).getByTestId("edit-window");
    expect(field).toHaveValue("32768");
    await user.clear(field);
    await user.type(field, "65536");
    await user.click(within(editor).getByTestId("edit-save"));
    await waitFor(() => expect(backend.callsOf("provider_update")).toHaveLength(1));
    expect(backend.callsOf("provider_update")[0]?.args).toMatchObject({ name: "hosted", contextWindow: 65536 });
    expect(within(await row("hosted")).getByTestId("provider-window-source")).toHaveTextContent("65,536 tokens, as configured");

    const llama = await row("llama");
    await user.click(within(llama).getByTestId("provider-edit"));
    expect(within(llama).getByTestId("edit-window-source")).toHaveTextContent(/^8,192 tokens, as the server reports$/);
  });

  it("shows what a connection test learned: the window, its warning, and structured output", async () => {
    const backend = withProviders();
    backend.probeFacts = { contextWindow: 8192, contextWindowSource: "served", windowWarning: WARNING, structuredOutput: true };
    const { user } = renderApp();
    await openSettings(user);
    const mine = await row("mine");
    await user.click(within(mine).getByTestId("provider-test"));
    const result = await within(mine).findByTestId("provider-test-result");
    await waitFor(() => expect(result).toHaveAttribute("data-state", "passed"));
    expect(result).toHaveTextContent("answered in 42 ms");
    expect(within(result).getByTestId("probe-window")).toHaveTextContent("Context window: 8,192 tokens, as the server reports");
    expect(within(result).getByTestId("probe-window-warning")).toHaveTextContent(
      "The window is set to 32,768 tokens, but llama.cpp serves 8,192 for this model; requests are fitted to 8,192.",
    );
    expect(within(result).getByTestId("probe-structured")).toHaveTextContent("Holds answers to a JSON schema");
    // The row reads the window the test stored.
    await waitFor(() => expect(within(mine).getByTestId("provider-window-source")).toHaveTextContent("8,192 tokens, as the server reports"));

    backend.probeFacts = { contextWindow: 32768, contextWindowSource: "preset", windowWarning: null, structuredOutput: false };
    await user.click(within(await row("hosted")).getByTestId("provider-test"));
    const hosted = await within(await row("hosted")).findByTestId("provider-test-result");
    await waitFor(() => expect(within(hosted).getByTestId("probe-structured")).toHaveTextContent(
      "Does not hold answers to a JSON schema (reviews are parsed and repaired)",
    ));
    expect(within(hosted).getByTestId("probe-window")).toHaveTextContent("32,768 tokens, the preset's (the server does not say)");
    expect(within(hosted).queryByTestId("probe-window-warning")).toBeNull();

    await act(() => setLanguage("zh"));
    expect(within(hosted).getByTestId("probe-structured")).toHaveTextContent("不能让回答遵循 JSON 模式（审查结果会被解析并修复）");
    await act(() => setLanguage("en"));
  });

  it("says nothing of structured output or the window when the test does not say", async () => {
    withProviders();
    const { user } = renderApp();
    await openSettings(user);
    const mine = await row("mine");
    await user.click(within(mine).getByTestId("provider-test"));
    const result = await within(mine).findByTestId("provider-test-result");
    await waitFor(() => expect(result).toHaveAttribute("data-state", "passed"));
    expect(within(result).queryByTestId("probe-facts")).toBeNull();
  });
});

describe("the window at the first start", () => {
  async function addOllama(backend: FakeBackend) {
    const { user } = renderApp();
    await user.click(await screen.findByTestId("first-start-setup"));
    const dialog = screen.getByRole("dialog", { name: "Set up a model provider" });
    await waitFor(() => expect(within(dialog).getByRole("option", { name: "Ollama (local)" })).toBeInTheDocument());
    await user.selectOptions(within(dialog).getByTestId("setup-preset"), "ollama");
    await user.click(within(dialog).getByTestId("setup-add"));
    await waitFor(() => expect(backend.callsOf("provider_test")).toHaveLength(1));
    return { user, dialog };
  }

  it("shows what the test learned, with the warning, before the setup closes", async () => {
    const backend = new FakeBackend().install();
    backend.probeFacts = { contextWindow: 8192, contextWindowSource: "served", windowWarning: WARNING, structuredOutput: true };
    const { user, dialog } = await addOllama(backend);
    const passed = await within(dialog).findByTestId("setup-passed");
    expect(passed).toHaveTextContent("The provider answered in 42 ms and is the one runs use.");
    expect(within(passed).getByTestId("probe-window")).toHaveTextContent("Context window: 8,192 tokens, as the server reports");
    expect(within(passed).getByTestId("probe-window-warning")).toHaveTextContent("but llama.cpp serves 8,192 for this model");
    expect(within(passed).getByTestId("probe-structured")).toHaveTextContent("Holds answers to a JSON schema");
    // The server said its window: there is nothing to set here.
    expect(within(dialog).queryByTestId("setup-window")).toBeNull();
    expect(backend.settings.provider).toBe("ollama");
    await user.click(within(dialog).getByTestId("setup-done"));
    await waitFor(() => expect(screen.queryByTestId("provider-setup")).toBeNull());
    expect(backend.callsOf("provider_update")).toHaveLength(0);
  });

  it("offers the window to set where the server does not say it, and saves it", async () => {
    const backend = new FakeBackend().install();
    backend.probeFacts = { contextWindow: 32768, contextWindowSource: "preset", windowWarning: null, structuredOutput: false };
    const { user, dialog } = await addOllama(backend);
    const passed = await within(dialog).findByTestId("setup-passed");
    expect(within(passed).getByTestId("probe-window")).toHaveTextContent("32,768 tokens, the preset's (the server does not say)");
    expect(within(passed).getByTestId("probe-structured")).toHaveTextContent(
      "Does not hold answers to a JSON schema (reviews are parsed and repaired)",
    );
    expect(within(passed).queryByTestId("probe-window-warning")).toBeNull();
    const field = within(dialog).getByTestId("setup-window");
    expect(field).toHaveValue("32768");
    await user.clear(field);
    await user.type(field, "16000");
    await user.click(within(dialog).getByTestId("setup-done"));
    await waitFor(() => expect(screen.queryByTestId("provider-setup")).toBeNull());
    expect(backend.callsOf("provider_update")[0]?.args).toMatchObject({ name: "ollama", contextWindow: 16000 });
    expect(backend.providers[0]).toMatchObject({ contextWindow: 16000, contextWindowSource: "configured" });
  });
});
