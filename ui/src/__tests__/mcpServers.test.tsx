import { screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { backendWith } from "../test/conversation";
import { renderApp } from "../test/render";
import { openSettings as openSection } from "../test/settings";

async function openSettings() {
  const utils = renderApp();
  await openSection(utils.user, "mcp");
  const section = await screen.findByRole("region", { name: "MCP servers" });
  return { ...utils, section };
}

beforeEach(async () => {
  await setLanguage("en");
});

describe("MCP servers in the settings", () => {
  it("lists servers with where they run and which variables they get, never their values", async () => {
    const backend = backendWith();
    backend.mcpServers = [
      { name: "db", kind: "stdio", place: "host", summary: "uvx mcp-server-postgres", enabled: true, secretNames: ["PGPASSWORD"], status: null, allow: [], deny: ["drop_table", "truncate"] },
      { name: "tickets", kind: "http", place: null, summary: "https://mcp.example.com/mcp", enabled: false, secretNames: [], status: null, allow: [], deny: [] },
    ];
    const { section } = await openSettings();
    const rows = await within(section).findAllByTestId("mcp-server");
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent("on this machine · uvx mcp-server-postgres");
    expect(rows[0]).toHaveTextContent("Given PGPASSWORD (the values are kept in the keyring).");
    expect(rows[0]).toHaveTextContent("Runs on this machine with your rights.");
    expect(within(rows[0] as HTMLElement).getByTestId("mcp-lists")).toHaveTextContent("Never offered: drop_table, truncate.");
    expect(within(rows[1] as HTMLElement).queryByTestId("mcp-lists")).toBeNull();
    expect(within(rows[1] as HTMLElement).getByRole("checkbox", { name: "Used by runs" })).not.toBeChecked();
  });

  it("checks a server: ready with its tools and their cost, or failed with the reason", async () => {
    const backend = backendWith();
    backend.mcpServers = [
      { name: "everything", kind: "stdio", place: "host", summary: "node e.js", enabled: true, secretNames: [], status: null, allow: [], deny: [] },
      { name: "hung", kind: "stdio", place: "host", summary: "sleep 300", enabled: true, secretNames: [], status: null, allow: [], deny: [] },
    ];
    backend.mcpChecks = {
      everything: { tools: [{ name: "echo", description: "Echoes back the input string", tokens: 62 }], tokens: 62, startedMs: 240 },
      hung: 'MCP server "hung" did not start: it did not finish the MCP handshake within 30 s',
    };
    const { user, section } = await openSettings();
    const rows = await within(section).findAllByTestId("mcp-server");
    const everything = rows[0] as HTMLElement;
    const hung = rows[1] as HTMLElement;
    await user.click(within(everything).getByRole("button", { name: "Check" }));
    await waitFor(() => expect(within(everything).getByTestId("mcp-state")).toHaveTextContent("Ready: 1 tool, 62 tokens of schemas, started in 240 ms."));
    await user.click(within(hung).getByRole("button", { name: "Check" }));
    await waitFor(() => expect(within(hung).getByRole("alert")).toHaveTextContent("within 30 s"));
    // A checked server is started again from scratch: a restart, which finds it ready now.
    backend.mcpChecks.hung = { tools: [], tokens: 0, startedMs: 90 };
    await user.click(within(hung).getByRole("button", { name: "Restart" }));
    await waitFor(() => expect(within(hung).getByTestId("mcp-state")).toHaveTextContent("Ready: 0 tools, 0 tokens of schemas, started in 90 ms."));
    expect(backend.callsOf("mcp_server_check")).toHaveLength(3);
  });

  it("turns off a server whose check failed, and moves one whose program the sandbox lacks to this machine", async () => {
    const backend = backendWith();
    backend.mcpServers = [
      { name: "fs", kind: "stdio", place: "docker", summary: "npx -y @modelcontextprotocol/server-filesystem /workspace", enabled: true, secretNames: [], status: null, allow: [], deny: [] },
    ];
    backend.mcpChecks = {
      fs: 'MCP server "fs" did not start: "npx" is not in the sandbox image, so it cannot start there: run the server on this computer',
    };
    const { user, section } = await openSettings();
    const row = (await within(section).findAllByTestId("mcp-server"))[0] as HTMLElement;
    await user.click(within(row).getByRole("button", { name: "Check" }));
    await waitFor(() => expect(within(row).getByTestId("mcp-turned-off")).toHaveTextContent("Runs no longer use this server"));
    expect(within(row).getByRole("checkbox", { name: "Used by runs" })).not.toBeChecked();
    backend.mcpChecks.fs = { tools: [{ name: "read_file", description: "Reads a file", tokens: 80 }], tokens: 80, startedMs: 300 };
    await user.click(within(row).getByTestId("mcp-move-host"));
    await waitFor(() => expect(backend.callsOf("mcp_server_set_place")[0]?.args).toEqual({ name: "fs", place: "host" }));
    const moved = (await within(section).findAllByTestId("mcp-server"))[0] as HTMLElement;
    await waitFor(() => expect(within(moved).getByTestId("mcp-state")).toHaveTextContent("Ready: 1 tool"));
    expect(moved).toHaveTextContent("on this machine");
  });

  it("adds a server by command, turns one off and removes one", async () => {
    const backend = backendWith();
    const { user, section } = await openSettings();
    expect(within(section).getByTestId("mcp-none")).toBeInTheDocument();
    await user.type(within(section).getByRole("textbox", { name: "Name" }), "files");
    await user.type(within(section).getByRole("textbox", { name: "Command or URL" }), "node fs.js /data");
    await user.selectOptions(within(section).getByRole("combobox", { name: "Where it runs" }), "host");
    await user.click(within(section).getByRole("button", { name: "Add" }));
    await waitFor(() =>
      expect(backend.callsOf("mcp_server_add")).toEqual([
        {
          cmd: "mcp_server_add",
          args: {
            name: "files",
            command: "node fs.js /data",
            url: null,
            place: "host",
            options: { variables: "", bearerToken: null, cwd: null, startupTimeoutSecs: null, callTimeoutSecs: null, allow: "", deny: "" },
          },
        },
      ]),
    );
    const row = await within(section).findByTestId("mcp-server");
    await user.click(within(row).getByRole("checkbox", { name: "Used by runs" }));
    await waitFor(() => expect(backend.mcpServers[0]?.enabled).toBe(false));
    await user.click(within(row).getByRole("button", { name: "Remove" }));
    await waitFor(() => expect(within(section).queryByTestId("mcp-server")).toBeNull());
  });

  it("adds an authenticated HTTP server and a slow command with their variables, token and timeouts", async () => {
    const backend = backendWith();
    const { user, section } = await openSettings();
    const name = within(section).getByRole("textbox", { name: "Name" });
    const target = within(section).getByRole("textbox", { name: "Command or URL" });
    await user.type(name, "tickets");
    await user.type(target, "https://mcp.example.com/mcp");
    await user.click(within(section).getByText("More options"));
    await user.type(within(section).getByTestId("mcp-variables"), "X-Team=analytics");
    // A URL takes a token and no folder.
    expect(within(section).queryByTestId("mcp-cwd")).toBeNull();
    await user.type(within(section).getByLabelText("Bearer token (a URL; kept in the keyring)"), "tok-9f8e");
    await user.type(within(section).getByTestId("mcp-call-timeout"), "300");
    await user.click(within(section).getByRole("button", { name: "Add" }));
    await waitFor(() => expect(backend.callsOf("mcp_server_add")).toHaveLength(1));
    expect(backend.callsOf("mcp_server_add")[0]?.args.options).toEqual({
      variables: "X-Team=analytics",
      bearerToken: "tok-9f8e",
      cwd: null,
      startupTimeoutSecs: null,
      callTimeoutSecs: 300,
      allow: "",
      deny: "",
    });
    // The form is cleared, the token with it.
    await waitFor(() => expect(within(section).getByTestId("mcp-variables")).toHaveValue(""));

    await user.type(name, "warehouse");
    await user.type(target, "uvx mcp-server-warehouse");
    expect(within(section).queryByTestId("mcp-bearer")).toBeNull();
    await user.type(within(section).getByTestId("mcp-variables"), "WAREHOUSE_DSN=duckdb:///q3.db");
    await user.type(within(section).getByTestId("mcp-cwd"), "/srv/data");
    await user.type(within(section).getByTestId("mcp-startup-timeout"), "120");
    await user.type(within(section).getByTestId("mcp-deny"), "drop_table, truncate");
    await user.click(within(section).getByRole("button", { name: "Add" }));
    await waitFor(() => expect(backend.callsOf("mcp_server_add")).toHaveLength(2));
    expect(backend.callsOf("mcp_server_add")[1]?.args.options).toEqual({
      variables: "WAREHOUSE_DSN=duckdb:///q3.db",
      bearerToken: null,
      cwd: "/srv/data",
      startupTimeoutSecs: 120,
      callTimeoutSecs: null,
      allow: "",
      deny: "drop_table, truncate",
    });
  });

  it("shows how each server's last start went, with a failed one's last stderr lines", async () => {
    const backend = backendWith();
    const at = Date.UTC(2026, 10, 27, 8, 0);
    backend.mcpServers = [
      {
        name: "everything", kind: "stdio", place: "docker", summary: "node e.js", enabled: true, secretNames: [],
        status: { state: "ready", atMs: at, tools: 13, tokens: 1246, startedMs: 388, error: null, stderr: [] },
        allow: [],
        deny: [],
      },
      {
        name: "db", kind: "stdio", place: "host", summary: "uvx mcp-server-postgres", enabled: true, secretNames: [],
        status: {
          state: "failed", atMs: at, tools: null, tokens: null, startedMs: null,
          error: 'MCP server "db" did not start: the process exited',
          stderr: ["loading config", "cannot reach db: connection refused"],
        },
        allow: [],
        deny: [],
      },
      { name: "new", kind: "stdio", place: "host", summary: "node n.js", enabled: true, secretNames: [], status: null, allow: [], deny: [] },
    ];
    backend.mcpChecks = { new: "MCP server \"new\" did not start: the process exited" };
    backend.mcpStderr = { new: ["Error: Cannot find module 'n.js'"] };
    const { user, section } = await openSettings();
    const rows = await within(section).findAllByTestId("mcp-server");
    const [everything, db, fresh] = rows as HTMLElement[];
    expect(within(everything!).getByTestId("mcp-last")).toHaveAttribute("data-state", "ready");
    expect(within(everything!).getByTestId("mcp-last")).toHaveTextContent("13 tools, 1,246 tokens of schemas, in 388 ms");
    expect(within(db!).getByTestId("mcp-last")).toHaveAttribute("data-state", "failed");
    expect(within(db!).getByTestId("mcp-last")).toHaveTextContent("the process exited");
    expect(within(db!).getByText(/cannot reach db: connection refused/)).toBeVisible();
    expect(within(fresh!).getByTestId("mcp-last")).toHaveTextContent("Not started yet");
    // A check that fails shows why, and what the server wrote to stderr.
    await user.click(within(fresh!).getByRole("button", { name: "Check" }));
    await waitFor(() => expect(within(fresh!).getByRole("alert")).toHaveTextContent("Cannot find module 'n.js'"));
  });
});
