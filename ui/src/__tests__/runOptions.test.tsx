import { screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { backendWith, openC1 } from "../test/conversation";
import { openSettings } from "../test/settings";

beforeEach(async () => {
  await setLanguage("en");
});

describe("a conversation's run options", () => {
  it("follow the settings until changed, save each change, and refuse a bad budget in place", async () => {
    const backend = backendWith();
    backend.providers = [
      { name: "local", model: "qwen3", baseUrl: "http://localhost:8080/v1", contextWindow: 32000, hasApiKey: false },
      { name: "careful", model: "claude", baseUrl: "https://api.anthropic.com", contextWindow: 200000, hasApiKey: true },
    ] as typeof backend.providers;
    backend.settings = { provider: "local", reviewerProvider: null, sandbox: "host" };
    const { user } = await openC1();
    const button = await screen.findByTestId("run-options-button");
    expect(button).toHaveTextContent("local · host · 50 calls · tenth man: tool and final review");

    await user.click(button);
    const form = screen.getByTestId("run-options");
    expect(within(form).getByTestId("run-options-provider")).toHaveDisplayValue("As in Settings (local)");
    await user.selectOptions(within(form).getByTestId("run-options-provider"), "careful");
    await user.selectOptions(within(form).getByTestId("run-options-sandbox"), "docker");
    await user.selectOptions(within(form).getByTestId("run-options-tenth-man"), "off");
    await waitFor(() => expect(button).toHaveTextContent("careful · Docker · 50 calls · tenth man off"));
    // A label cut at a narrow select's edge is whole in its tooltip.
    expect(within(form).getByTestId("run-options-provider")).toHaveAttribute("title", "careful (claude)");
    expect(within(form).getByTestId("run-options-sandbox")).toHaveAttribute("title", "Docker");
    expect(backend.callsOf("run_options_save").slice(-1)[0]?.args).toEqual({
      conversationId: "c1",
      provider: "careful",
      sandbox: "docker",
      maxSteps: null,
      tenthMan: "off",
    });

    const steps = within(form).getByTestId("run-options-steps");
    await user.type(steps, "5000{Enter}");
    expect(await within(form).findByTestId("run-options-error")).toHaveTextContent("between 1 and 1000");
    expect(screen.queryByTestId("error-banner")).toBeNull();
    await user.clear(steps);
    await user.type(steps, "120{Enter}");
    await waitFor(() => expect(within(form).queryByTestId("run-options-error")).toBeNull());
    await waitFor(() => expect(button).toHaveTextContent("120 calls"));
  });

  it("show where host runs work, take a folder only from the dialog, and go back to the default", async () => {
    const backend = backendWith();
    backend.providers = [{ name: "local", model: "qwen3", baseUrl: "http://localhost:8080/v1", contextWindow: 32000, hasApiKey: false }];
    const { user } = await openC1();
    await user.click(await screen.findByTestId("run-options-button"));
    const form = screen.getByTestId("run-options");
    expect(within(form).getByTestId("workspace-path")).toHaveTextContent("/data/workspaces/c1");
    backend.pickedFolder = "/home/analyst/q3";
    await user.click(within(form).getByTestId("workspace-choose"));
    await waitFor(() => expect(within(form).getByTestId("workspace-path")).toHaveTextContent("/home/analyst/q3"));
    expect(backend.callsOf("workspace_choose")[0]?.args).toEqual({
      conversationId: "c1",
      dialogTitle: "Choose the conversation's workspace folder",
    });
    await user.click(within(form).getByTestId("workspace-open"));
    expect(backend.callsOf("workspace_open")).toHaveLength(1);
    await user.click(within(form).getByTestId("workspace-default"));
    await waitFor(() => expect(within(form).getByTestId("workspace-path")).toHaveTextContent("/data/workspaces/c1"));
    // In Docker the folder does not apply, and the form says so.
    await user.selectOptions(within(form).getByTestId("run-options-sandbox"), "docker");
    await waitFor(() => expect(within(form).getByTestId("run-options-workspace")).toHaveTextContent("container's /workspace"));
  });

  it("say which provider a run will take when none is the default: the only one, or none of several", async () => {
    const backend = backendWith();
    backend.providers = [{ name: "local", model: "qwen3", baseUrl: "http://localhost:8080/v1", contextWindow: 32000, hasApiKey: false }];
    backend.settings = { provider: null, reviewerProvider: null, sandbox: "host" };
    await openC1();
    expect(await screen.findByTestId("run-options-button")).toHaveTextContent(/^local · host/);
  });

  it("say that a run needs a choice when several providers are set up and none is the default", async () => {
    const backend = backendWith();
    backend.providers = [
      { name: "local", model: "qwen3", baseUrl: "http://localhost:8080/v1", contextWindow: 32000, hasApiKey: false },
      { name: "careful", model: "claude", baseUrl: "https://api.anthropic.com", contextWindow: 200000, hasApiKey: true },
    ] as typeof backend.providers;
    backend.settings = { provider: null, reviewerProvider: null, sandbox: "host" };
    const { user } = await openC1();
    const button = await screen.findByTestId("run-options-button");
    await waitFor(() => expect(button).toHaveTextContent(/^no default provider: choose one · host/));
    await user.click(button);
    expect(within(screen.getByTestId("run-options")).getByTestId("run-options-provider")).toHaveDisplayValue(
      "As in Settings (no default provider: choose one)",
    );
    await user.click(button);
    // Chosen in Settings: the line says so once the settings close, without reopening anything.
    await openSettings(user, "runs");
    await user.selectOptions(within(await screen.findByTestId("run-settings")).getByTestId("run-provider"), "careful");
    await user.click(screen.getByTestId("settings-close"));
    await waitFor(() => expect(button).toHaveTextContent(/^careful · host/));
  });
});

describe("MCP servers in a conversation's run options", () => {
  it("switch a server off for this conversation only, and say when the settings turned one off", async () => {
    const backend = backendWith();
    backend.mcpServers = [
      { name: "db", kind: "stdio", place: "docker", summary: "uvx mcp-server-postgres", enabled: true, secretNames: [], status: null, allow: [], deny: [] },
      { name: "tickets", kind: "http", place: null, summary: "https://mcp.example.com/mcp", enabled: false, secretNames: [], status: null, allow: [], deny: [] },
    ];
    const { user } = await openC1();
    await user.click(await screen.findByTestId("run-options-button"));
    const switches = await screen.findByRole("group", { name: "MCP servers used here" });
    const db = within(switches).getByRole("checkbox", { name: "db" });
    expect(db).toBeChecked();
    expect(within(switches).getByText(/off for every run in the settings/)).toBeInTheDocument();
    await user.click(db);
    await waitFor(() =>
      expect(backend.callsOf("mcp_conversation_set")).toEqual([
        { cmd: "mcp_conversation_set", args: { conversationId: "c1", name: "db", on: false } },
      ]),
    );
    expect(db).not.toBeChecked();
    expect(backend.mcpOff.c1).toEqual(["db"]);
  });
});
