import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { PREVIEW_CHARS } from "../components/MessageContent";
import { FakeBackend } from "../test/fakeBackend";
import { conversation, message } from "../test/fixtures";
import { renderApp } from "../test/render";

const chat = [
  message({ id: "m1", seq: 1, role: "system", content: "You are terse." }),
  message({
    id: "m2",
    seq: 2,
    role: "user",
    content: "line one\n    indented line\n\nafter a blank line",
    tokens: 12,
    pinned: true,
  }),
  message({
    id: "m3",
    seq: 3,
    role: "assistant",
    content: "Let me look.",
    reasoning: "The user wants the file listing.",
    toolCalls: [
      { id: "call_1", name: "read_file", arguments: '{"path":"/tmp/a.txt","lines":[1,2]}' },
      { id: "call_2", name: "shell", arguments: "{not json" },
    ],
    tokens: 1234,
  }),
  message({ id: "m4", seq: 4, role: "tool", name: "read_file", content: "hello", toolCallId: "call_1" }),
];

function backendWithChat() {
  return new FakeBackend({
    conversations: [
      conversation({ id: "a", title: "With messages", messageCount: 4, tokens: 1300 }),
      conversation({ id: "b", title: "Empty one" }),
    ],
    messages: { a: chat, b: [] },
  }).install();
}

async function open(user: ReturnType<typeof renderApp>["user"], id: string) {
  const li = await waitFor(() => {
    const found = screen
      .getAllByTestId("conversation-item")
      .find((el) => el.getAttribute("data-conversation-id") === id);
    if (!found) throw new Error(`no item ${id}`);
    return found;
  });
  await user.click(li);
}

describe("tool results", () => {
  it("folds a long output under its first lines and size", async () => {
    const long = Array.from({ length: 30 }, (_, i) => `row ${i + 1}`).join("\n");
    new FakeBackend({
      conversations: [conversation({ id: "a", title: "Long output", messageCount: 1 })],
      messages: { a: [message({ id: "t1", seq: 1, role: "tool", name: "shell", toolCallId: "call_9", content: long })] },
    }).install();
    const { user } = renderApp();
    await open(user, "a");
    const output = await screen.findByTestId("tool-output");
    expect(output.tagName).toBe("DETAILS");
    expect(output).not.toHaveAttribute("open");
    const summary = output.querySelector("summary")!;
    expect(summary).toHaveTextContent("row 1 row 2 row 3 (30 lines, 200 characters)");
    expect(within(output).getByTestId("tool-output-head").textContent).toBe("row 1\nrow 2\nrow 3");
    await user.click(summary);
    expect(output).toHaveAttribute("open");
  });
});

describe("the open conversation", () => {
  it("shows its messages read-only with roles, seq, tokens and pin", async () => {
    const backend = backendWithChat();
    const { user } = renderApp();
    await open(user, "a");

    // The tool's result is on its call's card, not a row of its own.
    await waitFor(() => expect(screen.getAllByTestId("message")).toHaveLength(3));
    expect(backend.callsOf("message_page")).toEqual([{ cmd: "message_page", args: { conversationId: "a", at: { kind: "end" }, limit: 200 } }]);
    const messages = screen.getAllByTestId("message");
    expect(messages.map((m) => m.getAttribute("data-seq"))).toEqual(["1", "2", "3"]);
    expect(messages[2]).toHaveAttribute("data-result-seqs", "4");
    expect(messages.map((m) => within(m).getByTestId("message-role").textContent)).toEqual(["System", "User", "Assistant"]);

    const [, user2, assistant] = messages as [HTMLElement, HTMLElement, HTMLElement];
    expect(within(user2).getByTestId("message-seq")).toHaveTextContent("#2");
    expect(user2).toHaveTextContent("12 tokens");
    expect(assistant).toHaveTextContent("1,234 tokens");
    // Whitespace and newlines survive exactly.
    expect(within(user2).getByTestId("message-content").textContent).toBe(
      "line one\n    indented line\n\nafter a blank line",
    );
    expect(within(user2).getByTestId("message-content").tagName).toBe("PRE");
    // Only the pinned message carries the marker.
    expect(screen.getAllByTestId("pinned-marker")).toHaveLength(1);
    expect(within(user2).getByTestId("pinned-marker")).toHaveTextContent("Pinned");
    // No editing controls in the read-only view.
    // Stored messages cannot be edited: the only text field is the composer's task.
    const fields = within(screen.getByTestId("conversation-view")).queryAllByRole("textbox");
    expect(fields).toHaveLength(1);
    expect(fields[0]).toHaveAccessibleName("Task");
  });

  it("keeps reasoning in a collapsed <details> and shows tool calls and results", async () => {
    backendWithChat();
    const { user } = renderApp();
    await open(user, "a");
    const messages = await screen.findAllByTestId("message");
    const assistant = messages[2]!;

    const reasoning = within(assistant).getByTestId("reasoning");
    expect(reasoning.tagName).toBe("DETAILS");
    expect(reasoning).not.toHaveAttribute("open");
    expect(reasoning.querySelector("summary")).toHaveTextContent("Reasoning");
    expect(within(reasoning).getByTestId("reasoning-content")).toHaveTextContent("The user wants the file listing.");
    await user.click(reasoning.querySelector("summary")!);
    expect(reasoning).toHaveAttribute("open");

    const calls = within(assistant).getAllByTestId("tool-call");
    expect(calls).toHaveLength(2);
    expect(within(calls[0]!).getByTestId("tool-call-name")).toHaveTextContent("read_file");
    // One readable line per call; the JSON is folded under it until asked for.
    expect(within(calls[0]!).getByTestId("tool-call-line")).toHaveTextContent("/tmp/a.txt");
    expect(calls[0]!.tagName).toBe("DETAILS");
    expect(calls[0]).not.toHaveAttribute("open");
    await user.click(calls[0]!.querySelector("summary")!);
    expect(calls[0]).toHaveAttribute("open");
    expect(within(calls[0]!).getByTestId("tool-call-arguments").textContent).toBe(
      '{\n  "path": "/tmp/a.txt",\n  "lines": [\n    1,\n    2\n  ]\n}',
    );
    expect(within(calls[1]!).getByTestId("tool-call-name")).toHaveTextContent("shell");
    expect(within(calls[1]!).getByTestId("tool-call-arguments").textContent).toBe("{not json");

    // Each result is on its call's card, under the call's line: one card, one role badge.
    const cards = within(assistant).getAllByTestId("tool-card");
    const result = within(cards[0]!).getByTestId("tool-result");
    expect(result).toHaveAttribute("data-seq", "4");
    expect(within(result).getByTestId("result-seq")).toHaveTextContent("#4");
    expect(within(assistant).getAllByTestId("message-role")).toHaveLength(1);
    // The call without a loaded result has none.
    expect(within(cards[1]!).queryByTestId("tool-result")).toBeNull();
    // Internal ids are not shown: they are in the tooltips.
    expect(assistant).not.toHaveTextContent("call_1");
    expect(within(result).getByTestId("result-seq")).toHaveAttribute("title", "call_1");
    expect(calls[1]!.querySelector("summary")).toHaveAttribute("title", "call_2");
    expect(assistant).not.toHaveTextContent("call_2");
    // A short output shows in full.
    expect(within(result).queryByTestId("tool-output")).toBeNull();
    expect(within(result).getByTestId("message-content")).toHaveTextContent("hello");
    expect(within(assistant).queryByTestId("tool-result-label")).not.toBeInTheDocument();
    expect(messages[0]!.querySelector("details")).toBeNull();
  });

  it("says so when the conversation has no messages", async () => {
    backendWithChat();
    const { user } = renderApp();
    await open(user, "b");
    expect(await screen.findByTestId("no-messages")).toHaveTextContent(
      "No messages yet: give the agent a task below.",
    );
    expect(screen.getByTestId("conversation-title")).toHaveTextContent("Empty one");
  });

  it("shows a loading state, and a late answer for a previous conversation never wins", async () => {
    const backend = backendWithChat();
    backend.messages.b = [message({ id: "b1", seq: 7, content: "from b" })];
    const { user } = renderApp();
    const releaseA = backend.hold("message_page");
    await open(user, "a");
    expect(await screen.findByTestId("messages-loading")).toHaveTextContent("Loading messages…");

    await open(user, "b");
    await waitFor(() => expect(screen.getAllByTestId("message")).toHaveLength(1));

    releaseA(); // the answer for "a" arrives after "b" is shown
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(screen.getAllByTestId("message")).toHaveLength(1);
    expect(screen.getByTestId("message")).toHaveAttribute("data-seq", "7");
    expect(screen.getByTestId("conversation-title")).toHaveTextContent("Empty one");
    expect(backend.callsOf("message_page").map((c) => c.args)).toEqual([
      { conversationId: "a", at: { kind: "end" }, limit: 200 },
      { conversationId: "b", at: { kind: "end" }, limit: 200 },
    ]);
  });

  it("shows the head of a huge message first and all of it on request", async () => {
    const huge = "x".repeat(PREVIEW_CHARS) + "THE-END";
    new FakeBackend({
      conversations: [conversation({ id: "h", title: "Huge" })],
      messages: { h: [message({ id: "big", seq: 1, content: huge })] },
    }).install();
    const { user } = renderApp();
    await open(user, "h");

    const content = await screen.findByTestId("message-content");
    expect(content.textContent).toHaveLength(PREVIEW_CHARS);
    expect(content.textContent).not.toContain("THE-END");
    expect(screen.getByTestId("truncation-note")).toHaveTextContent("Showing the first 200,000 of 200,007 characters.");

    await user.click(screen.getByTestId("show-all"));

    expect(screen.getByTestId("message-content").textContent).toBe(huge);
    expect(screen.queryByTestId("truncation-note")).not.toBeInTheDocument();
  });
});

describe("markdown", () => {
  it("renders an assistant's markdown with highlighted code, and never its HTML", async () => {
    const { FakeBackend } = await import("../test/fakeBackend");
    const { conversation, message } = await import("../test/fixtures");
    const { renderApp } = await import("../test/render");
    const { screen } = await import("@testing-library/react");
    new FakeBackend({
      conversations: [conversation({ id: "md", title: "Markdown" })],
      messages: {
        md: [
          message({
            id: "a1",
            seq: 1,
            role: "assistant",
            content: "## Totals\n\n| region | sum |\n| --- | --- |\n| R-1 | 10 |\n\n```python\nprint(sum([1, 2]))\n```\n\n<img src=x onerror=alert(1)>",
          }),
          message({ id: "u1", seq: 2, role: "user", content: "**not bold** in a user message" }),
        ],
      },
    }).install();
    const { user } = renderApp();
    await user.click(await screen.findByTestId("conversation-item"));
    const heading = await screen.findByRole("heading", { name: "Totals" });
    expect(heading.tagName).toBe("H2");
    expect(screen.getByRole("table")).toHaveTextContent("R-1");
    const code = document.querySelector("code.language-python");
    expect(code).not.toBeNull();
    expect(code!.querySelector(".hljs-built_in, .hljs-keyword, .hljs-number")).not.toBeNull();
    expect(document.querySelector("img")).toBeNull();
    expect(screen.getByText("**not bold** in a user message").tagName).toBe("PRE");
  });
});

describe("a tool call's code", () => {
  it("shows a command and Python as highlighted code blocks with real line breaks, not one JSON string", async () => {
    new FakeBackend({
      conversations: [conversation({ id: "a", title: "Code", messageCount: 1 })],
      messages: {
        a: [
          message({
            id: "m1",
            seq: 1,
            role: "assistant",
            content: "",
            toolCalls: [
              { id: "c1", name: "shell", arguments: JSON.stringify({ command: "cd out &&\nls -la | grep csv", timeout_secs: 30 }) },
              { id: "c2", name: "python", arguments: JSON.stringify({ code: 'import pandas as pd\ndf = pd.read_csv("ledger.csv")\nprint(df["amount"].sum())' }) },
            ],
          }),
        ],
      },
    }).install();
    const { user } = renderApp();
    await open(user, "a");
    const calls = await screen.findAllByTestId("tool-call");
    await user.click(calls[0]!.querySelector("summary")!);
    const command = within(calls[0]!).getByTestId("tool-call-code");
    expect(command).toHaveAttribute("data-language", "bash");
    const commandCode = await waitFor(() => {
      const code = command.querySelector("pre code");
      if (!code) throw new Error("no code block yet");
      return code;
    });
    // Markdown ends a code block with its line break.
    expect(commandCode.textContent).toBe("cd out &&\nls -la | grep csv\n");
    expect(commandCode.className).toContain("language-bash");
    expect(within(calls[0]!).getByTestId("tool-call-arguments")).toHaveTextContent('"timeout_secs": 30');
    expect(within(calls[0]!).getByTestId("tool-call-arguments").textContent).not.toContain("\\n");

    await user.click(calls[1]!.querySelector("summary")!);
    const python = await waitFor(() => {
      const code = within(calls[1]!).getByTestId("tool-call-code").querySelector("pre code");
      if (!code) throw new Error("no code block yet");
      return code;
    });
    expect(python.textContent).toBe('import pandas as pd\ndf = pd.read_csv("ledger.csv")\nprint(df["amount"].sum())\n');
    // Highlighted: the keyword is its own span.
    expect(python.querySelector(".hljs-keyword")).toHaveTextContent("import");
  });
});

describe("pinning from the window", () => {
  it("pins and unpins a message, and the list says so at once", async () => {
    const backend = backendWithChat();
    const { user } = renderApp();
    await open(user, "a");
    const assistant = (await screen.findAllByTestId("message")).find((m) => m.getAttribute("data-seq") === "3")!;
    expect(within(assistant).queryByTestId("pinned-marker")).toBeNull();
    await user.click(within(assistant).getByTestId("message-pin"));
    await waitFor(() => expect(backend.callsOf("message_set_pinned")[0]?.args).toEqual({ conversationId: "a", seq: 3, pinned: true }));
    const pinned = await waitFor(() => {
      const row = screen.getAllByTestId("message").find((m) => m.getAttribute("data-seq") === "3")!;
      expect(within(row).getByTestId("pinned-marker")).toBeInTheDocument();
      return row;
    });
    expect(within(pinned).getByTestId("message-pin")).toHaveTextContent("Unpin");
    await user.click(within(pinned).getByTestId("message-pin"));
    await waitFor(() => expect(backend.callsOf("message_set_pinned")[1]?.args).toEqual({ conversationId: "a", seq: 3, pinned: false }));
    await waitFor(() => {
      const row = screen.getAllByTestId("message").find((m) => m.getAttribute("data-seq") === "3")!;
      expect(within(row).queryByTestId("pinned-marker")).toBeNull();
    });
    // A system message is not offered: it is always sent.
    const system = screen.getAllByTestId("message").find((m) => m.getAttribute("data-seq") === "1")!;
    expect(within(system).queryByTestId("message-pin")).toBeNull();
  });
});
