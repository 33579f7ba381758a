import { describe, expect, it } from "vitest";
import { toolLabel } from "./toolName";

describe("tool names", () => {
  it("say an MCP tool's name and server in words, and leave the built-in ones alone", () => {
    expect(toolLabel("mcp__everything__get_sum")).toEqual({ label: "get sum (everything)", server: "everything" });
    expect(toolLabel("mcp__db__query-run")).toEqual({ label: "query-run (db)", server: "db" });
    expect(toolLabel("shell")).toEqual({ label: "shell", server: null });
    expect(toolLabel("mcp__broken")).toEqual({ label: "mcp__broken", server: null });
  });
});
