/**
 * A tool call's arguments as an analyst audits them: the command, the code, the query or the
 * file content as code with real line breaks (and the language to highlight it in), the other
 * arguments beside it as JSON. A command inside a JSON string reads as `"import pandas as
 * pd\nfrom …"` with literal escapes; nobody can check that.
 */

/** One argument shown as code. */
export type CodeArgument = {
  /** The argument's name, as the tool takes it. */
  name: string;
  /** A highlight.js language name, or `text`. */
  language: string;
  /** The code, as the model wrote it. */
  code: string;
};

/** The arguments split into code and the rest. */
export type CallCode = {
  code: CodeArgument[];
  /** The other arguments, pretty-printed JSON; `null` when there are none. */
  rest: string | null;
};

/** Argument names that hold code whatever they contain. */
const CODE_LANGUAGE: Record<string, string> = {
  command: "bash",
  cmd: "bash",
  shell: "bash",
  script: "bash",
  code: "python",
  python: "python",
  source: "python",
  sql: "sql",
  query: "sql",
  patch: "diff",
  diff: "diff",
};

/** Argument names that hold a file's content: its language is the file's. */
const CONTENT = new Set(["content", "contents", "text", "body", "new_text", "old_text"]);

const EXTENSION_LANGUAGE: Record<string, string> = {
  py: "python",
  sql: "sql",
  sh: "bash",
  bash: "bash",
  json: "json",
  md: "markdown",
  js: "javascript",
  ts: "typescript",
  r: "r",
  yaml: "yaml",
  yml: "yaml",
  toml: "ini",
  ini: "ini",
  csv: "text",
  tsv: "text",
  txt: "text",
  html: "xml",
  xml: "xml",
};

function languageOfPath(args: Record<string, unknown>): string {
  const path = ["path", "file", "file_path", "filename"].map((k) => args[k]).find((v) => typeof v === "string") as string | undefined;
  const ext = path?.split(".").pop()?.toLowerCase() ?? "";
  return EXTENSION_LANGUAGE[ext] ?? "text";
}

/** Splits a call's arguments; `null` when they are not a JSON object (shown as they came). */
export function callCode(argumentsText: string): CallCode | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(argumentsText);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return null;
  const args = parsed as Record<string, unknown>;
  const code: CodeArgument[] = [];
  const rest: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    const key = name.toLowerCase();
    if (typeof value === "string" && key in CODE_LANGUAGE) {
      code.push({ name, language: CODE_LANGUAGE[key]!, code: value });
    } else if (typeof value === "string" && CONTENT.has(key) && value.includes("\n")) {
      code.push({ name, language: languageOfPath(args), code: value });
    } else if (typeof value === "string" && value.includes("\n")) {
      code.push({ name, language: "text", code: value });
    } else {
      rest[name] = value;
    }
  }
  return { code, rest: Object.keys(rest).length > 0 ? JSON.stringify(rest, null, 2) : null };
}

/** A fenced Markdown block holding `code` whatever backticks it contains. */
export function fenced(language: string, code: string): string {
  const longest = Math.max(2, ...[...code.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${language === "text" ? "" : language}\n${code}\n${fence}`;
}
