import { screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { backendWith } from "../test/conversation";
import { renderApp } from "../test/render";

async function openSettings() {
  const utils = renderApp();
  await utils.user.click(await screen.findByRole("button", { name: "Settings" }));
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
      { name: "db", kind: "stdio", place: "host", summary: "uvx mcp-server-postgres", enabled: true, secretNames: ["PGPASSWORD"] },
      { name: "tickets", kind: "http", place: null, summary: "https://mcp.example.com/mcp", enabled: false, secretNames: [] },
    ];
    const { section } = await openSettings();
    const rows = await within(section).findAllByTestId("mcp-server");
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent("on this machine · uvx mcp-server-postgres");
    expect(rows[0]).toHaveTextContent("Given PGPASSWORD (the values are kept in the keyring).");
    expect(rows[0]).toHaveTextContent("Runs on this machine with your rights.");
    expect(within(rows[1] as HTMLElement).getByRole("checkbox", { name: "Used by runs" })).not.toBeChecked();
  });

  it("checks a server: ready with its tools and their cost, or failed with the reason", async () => {
    const backend = backendWith();
    backend.mcpServers = [
      { name: "everything", kind: "stdio", place: "host", summary: "node e.js", enabled: true, secretNames: [] },
      { name: "hung", kind: "stdio", place: "host", summary: "sleep 300", enabled: true, secretNames: [] },
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
        { cmd: "mcp_server_add", args: { name: "files", command: "node fs.js /data", url: null, place: "host" } },
      ]),
    );
    const row = await within(section).findByTestId("mcp-server");
    await user.click(within(row).getByRole("checkbox", { name: "Used by runs" }));
    await waitFor(() => expect(backend.mcpServers[0]?.enabled).toBe(false));
    await user.click(within(row).getByRole("button", { name: "Remove" }));
    await waitFor(() => expect(within(section).queryByTestId("mcp-server")).toBeNull());
  });
});
