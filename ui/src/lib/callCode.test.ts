import { describe, expect, it } from "vitest";
import { callCode, fenced } from "./callCode";

describe("callCode", () => {
  it("shows a command, code and a file's content as code with real line breaks", () => {
    const shell = callCode(JSON.stringify({ command: "cd out &&\nls -la", timeout_secs: 30 }));
    expect(shell).toEqual({ code: [{ name: "command", language: "bash", code: "cd out &&\nls -la" }], rest: '{\n  "timeout_secs": 30\n}' });
    const python = callCode(JSON.stringify({ code: 'import pandas as pd\nprint("ok")' }));
    expect(python?.code[0]).toEqual({ name: "code", language: "python", code: 'import pandas as pd\nprint("ok")' });
    expect(python?.rest).toBeNull();
    const written = callCode(JSON.stringify({ path: "out/totals.sql", content: "select 1;\nselect 2;" }));
    expect(written?.code[0]?.language).toBe("sql");
    expect(written?.rest).toBe('{\n  "path": "out/totals.sql"\n}');
    // A one-line content stays an argument; a multi-line note is text.
    expect(callCode(JSON.stringify({ path: "a.txt", content: "one line" }))?.code).toEqual([]);
    expect(callCode(JSON.stringify({ note: "a\nb" }))?.code[0]?.language).toBe("text");
  });

  it("leaves what is not a JSON object as it came", () => {
    expect(callCode("{not json")).toBeNull();
    expect(callCode("[1, 2]")).toBeNull();
    expect(callCode("null")).toBeNull();
  });

  it("fences code that holds backticks with a longer fence", () => {
    expect(fenced("bash", "echo `date`")).toBe("```bash\necho `date`\n```");
    expect(fenced("markdown", "```py\nx\n```")).toBe("````markdown\n```py\nx\n```\n````");
    expect(fenced("text", "plain")).toBe("```\nplain\n```");
  });
});
