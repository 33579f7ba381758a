/**
 * A tool's name as a person reads it. An MCP tool is offered to the model as
 * `mcp__<server>__<tool>`; the window says "<tool> (<server>)", with the offered name in the
 * tooltip. Built-in tools keep their names.
 */
export function toolLabel(name: string): { label: string; server: string | null } {
  if (!name.startsWith("mcp__")) return { label: name, server: null };
  const rest = name.slice("mcp__".length);
  const at = rest.indexOf("__");
  if (at <= 0 || at + 2 >= rest.length) return { label: name, server: null };
  const server = rest.slice(0, at);
  const tool = rest.slice(at + 2);
  return { label: `${tool.replace(/_/g, " ")} (${server})`, server };
}
