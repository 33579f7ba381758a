// Settings in sections (Models, Runs, Sandbox, MCP, Team store, Appearance): the tabs and their
// keyboard, where each setting lives, and the add-provider form Settings shares with the first
// start, against the fake backend.
import { act, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { SETTINGS_SECTIONS } from "../components/SettingsDialog";
import { setLanguage } from "../i18n";
import { backendWith } from "../test/conversation";
import { FakeBackend } from "../test/fakeBackend";
import { renderApp } from "../test/render";
import { openSettings, showSection } from "../test/settings";

beforeEach(async () => {
  await setLanguage("en");
});

describe("the sections of Settings", () => {
  it("lists six sections as tabs, opens on Models, and shows one section at a time", async () => {
    backendWith();
    const { user } = renderApp();
    const dialog = await openSettings(user);
    const list = within(dialog).getByRole("tablist", { name: "Settings sections" });
    const tabs = within(list).getAllByRole("tab");
    expect(tabs.map((tab) => tab.textContent)).toEqual(["Models", "Runs", "Sandbox", "MCP servers", "Team store", "Appearance"]);
    expect(tabs.map((tab) => tab.getAttribute("aria-selected"))).toEqual(["true", "false", "false", "false", "false", "false"]);
    // Each panel is named by its tab and controlled by it; only the chosen one is shown.
    for (const tab of tabs) {
      const panel = document.getElementById(tab.getAttribute("aria-controls") ?? "")!;
      expect(panel).toHaveAttribute("role", "tabpanel");
      expect(panel).toHaveAttribute("aria-labelledby", tab.id);
    }
    expect(within(dialog).getByRole("tabpanel", { name: "Models" })).toBeVisible();
    expect(within(dialog).getAllByRole("tabpanel")).toHaveLength(1);

    await user.click(within(list).getByRole("tab", { name: "Team store" }));
    expect(within(list).getByRole("tab", { name: "Team store" })).toHaveAttribute("aria-selected", "true");
    expect(within(dialog).getByRole("tabpanel", { name: "Team store" })).toBeVisible();
    expect(within(dialog).getByTestId("settings-panel-models")).not.toBeVisible();
    // What the build is stays in sight whichever section is shown.
    expect(within(dialog).getByTestId("settings-about")).toBeVisible();
  });

  it("moves between sections with the arrow keys, Home and End, with one tab stop for the list", async () => {
    backendWith();
    const { user } = renderApp();
    const dialog = await openSettings(user);
    const tab = (name: string) => within(dialog).getByRole("tab", { name });
    // Focus lands on the chosen tab first; the others are reached with the arrows, not Tab.
    await waitFor(() => expect(tab("Models")).toHaveFocus());
    expect(within(dialog).getAllByRole("tab").filter((t) => t.tabIndex === 0)).toEqual([tab("Models")]);

    await user.keyboard("{ArrowDown}");
    expect(tab("Runs")).toHaveFocus();
    expect(tab("Runs")).toHaveAttribute("aria-selected", "true");
    expect(within(dialog).getByRole("tabpanel", { name: "Runs" })).toBeVisible();
    await user.keyboard("{ArrowRight}");
    expect(tab("Sandbox")).toHaveFocus();
    await user.keyboard("{End}");
    expect(tab("Appearance")).toHaveFocus();
    expect(within(dialog).getByRole("tabpanel", { name: "Appearance" })).toBeVisible();
    // The arrows go round.
    await user.keyboard("{ArrowDown}");
    expect(tab("Models")).toHaveFocus();
    await user.keyboard("{ArrowUp}");
    expect(tab("Appearance")).toHaveFocus();
    await user.keyboard("{Home}");
    expect(tab("Models")).toHaveFocus();
    expect(within(dialog).getAllByRole("tab").filter((t) => t.tabIndex === 0)).toEqual([tab("Models")]);
    // Tab leaves the list for the chosen section's panel.
    await user.tab();
    expect(within(dialog).getByTestId("settings-panel-models")).toHaveFocus();
  });

  it("puts each setting in its section", async () => {
    const backend = backendWith();
    backend.providers = [{ name: "local", model: "m", baseUrl: "http://a", contextWindow: 128000, hasApiKey: false }];
    const { user } = renderApp();
    const dialog = await openSettings(user);
    const where: Record<(typeof SETTINGS_SECTIONS)[number], string[]> = {
      models: ["provider", "provider-test", "provider-edit", "thresholds", "provider-form"],
      runs: ["run-settings", "run-provider", "reviewer-provider", "preset-drop"],
      sandbox: ["sandbox-choice", "docker-engine", "sandbox-status"],
      mcp: ["mcp-servers"],
      store: ["shared-database"],
      appearance: ["language-switch", "theme-switch", "send-key-switch"],
    };
    await within(dialog).findByTestId("provider");
    await within(dialog).findByTestId("shared-database");
    for (const section of SETTINGS_SECTIONS) {
      const panel = await showSection(user, section);
      expect(panel).toBeVisible();
      for (const testId of where[section]) {
        expect(await within(panel).findByTestId(testId)).toBeVisible();
      }
    }
  });

  it("says where the python tool runs, and why a host run is not offered it, in both languages", async () => {
    backendWith();
    const { user } = renderApp();
    const dialog = await openSettings(user, "sandbox");
    const panel = within(dialog).getByTestId("settings-panel-sandbox");
    const line = await within(panel).findByTestId("python-kernel");
    const host = within(panel).getByRole("radio", { name: "Host (the workspace folder)" });
    const docker = within(panel).getByRole("radio", { name: "Docker container" });
    await user.click(host);
    await waitFor(() => expect(line).toHaveAttribute("data-offered", "false"));
    expect(line).toHaveTextContent("the host sandbox has no Python kernel");
    await user.click(docker);
    await waitFor(() => expect(within(panel).getByTestId("python-kernel")).toHaveAttribute("data-offered", "true"));
    expect(within(panel).getByTestId("python-kernel")).toHaveTextContent("from run to run");
    await act(() => setLanguage("zh"));
    expect(within(panel).getByTestId("python-kernel")).toHaveTextContent("Jupyter 内核");
    await act(() => setLanguage("en"));
  });

  it("keeps what was typed in a section while another is shown", async () => {
    backendWith();
    const { user } = renderApp();
    const dialog = await openSettings(user);
    await user.type(within(dialog).getByTestId("setup-name"), "gpu-box");
    await showSection(user, "mcp");
    expect(within(dialog).getByTestId("setup-name")).not.toBeVisible();
    await showSection(user, "models");
    expect(within(dialog).getByTestId("setup-name")).toHaveValue("gpu-box");
  });

  it("names the sections in Chinese", async () => {
    backendWith();
    const { user } = renderApp();
    await act(() => setLanguage("zh"));
    const dialog = await openSettings(user, "models", "设置");
    const list = within(dialog).getByRole("tablist", { name: "设置分区" });
    expect(within(list).getAllByRole("tab").map((tab) => tab.textContent)).toEqual(["模型", "运行", "沙箱", "MCP 服务器", "团队存储", "外观"]);
    expect(within(dialog).getByRole("form", { name: "添加模型服务" })).toBeVisible();
    expect(within(dialog).getByTestId("setup-add")).toHaveTextContent("添加并测试");
    await act(() => setLanguage("en"));
  });
});

describe("adding a provider in Settings", () => {
  it("is the first start's form: presets, the server's models, the same sentence for a failed test, and a retry that replaces", async () => {
    const backend = backendWith();
    backend.modelList = ["llama3.1:8b", "qwen3:8b"];
    backend.probeFailure = { kind: "unreachable", url: "http://localhost:11434/v1", status: null, detail: "connection refused" };
    const { user } = renderApp();
    const dialog = await openSettings(user);
    const form = within(dialog).getByRole("form", { name: "Add a provider" });
    expect(within(form).getByRole("radio", { name: "OpenAI-compatible" })).toHaveAttribute("aria-checked", "true");
    await waitFor(() => expect(within(form).getByRole("option", { name: "Ollama (local)" })).toBeInTheDocument());
    // Add is offered once a name and an address and model (or a preset) are given.
    expect(within(form).getByTestId("setup-add")).toBeDisabled();
    await user.selectOptions(within(form).getByTestId("setup-preset"), "ollama");
    expect(within(form).getByTestId("setup-base-url")).toHaveValue("http://localhost:11434/v1");
    expect(within(form).getByTestId("setup-name")).toHaveValue("ollama");
    await user.click(within(form).getByTestId("setup-find-models"));
    expect(await within(form).findByTestId("setup-models-found")).toHaveTextContent("2 models");
    await user.selectOptions(within(form).getByTestId("setup-model"), "llama3.1:8b");
    expect(within(form).getByTestId("setup-add")).toHaveTextContent("Add and test");
    await user.click(within(form).getByTestId("setup-add"));

    expect(await within(form).findByTestId("setup-test-failed")).toHaveTextContent(
      "Nothing answered at http://localhost:11434/v1: is the server running?",
    );
    // Added, though its test failed: listed, as at the first start.
    expect(await within(dialog).findByTestId("provider")).toHaveAttribute("data-name", "ollama");

    backend.probeFailure = null;
    backend.probeFacts = { contextWindow: null, contextWindowSource: "preset", windowWarning: null, structuredOutput: true };
    await user.click(within(form).getByTestId("setup-add"));
    // What the test learned, and the window to set since the server does not say it.
    const passed = await within(dialog).findByTestId("setup-passed");
    expect(passed).toHaveTextContent("The provider answered in 42 ms and is added.");
    expect(passed).toHaveTextContent("Holds answers to a JSON schema");
    expect(within(dialog).getByTestId("setup-window")).toBeInTheDocument();
    await user.click(within(dialog).getByTestId("setup-done"));

    await waitFor(() => expect(within(dialog).getByTestId("setup-name")).toHaveValue(""));
    expect(backend.providers.map((p) => p.name)).toEqual(["ollama"]);
    expect(backend.callsOf("provider_add").map((c) => c.args)).toEqual([
      { name: "ollama", preset: "ollama", protocol: null, baseUrl: "http://localhost:11434/v1", model: "llama3.1:8b", contextWindow: null, apiKey: null },
      { name: "ollama", preset: "ollama", protocol: null, baseUrl: "http://localhost:11434/v1", model: "llama3.1:8b", contextWindow: null, apiKey: null },
    ]);
    const row = within(dialog).getByTestId("provider");
    expect(within(row).getByTestId("provider-test-result")).toHaveAttribute("data-state", "passed");
    // In Settings a provider is added, not made the default: Runs chooses that.
    expect(backend.settings.provider).toBeNull();
  });

  it("says a refused provider under the form, in the same place at the first start", async () => {
    const refusal = { code: "invalid_input", message: "invalid base URL 'localhost:9': it needs http:// or https://" } as const;
    const fill = async (user: ReturnType<typeof renderApp>["user"], root: HTMLElement) => {
      await user.type(within(root).getByTestId("setup-name"), "mine");
      await user.type(within(root).getByTestId("setup-base-url"), "localhost:9");
      await user.type(within(root).getByTestId("setup-model"), "m");
      await user.click(within(root).getByTestId("setup-add"));
      return within(root).findByTestId("setup-error");
    };

    const first = new FakeBackend().install();
    first.fail("provider_add", refusal);
    const one = renderApp();
    await one.user.click(await screen.findByTestId("first-start-setup"));
    const setup = screen.getByRole("dialog", { name: "Set up a model provider" });
    const atStart = await fill(one.user, within(setup).getByTestId("provider-form"));
    expect(atStart).toHaveTextContent("it needs http:// or https://");
    one.unmount();

    const later = backendWith();
    later.fail("provider_add", refusal);
    const two = renderApp();
    const dialog = await openSettings(two.user);
    const inSettings = await fill(two.user, within(dialog).getByTestId("provider-form"));
    expect(inSettings.textContent).toBe(atStart.textContent);
    expect(screen.queryByTestId("error-banner")).toBeNull();
  });
});
