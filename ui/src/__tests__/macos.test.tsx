// The platform's conventions in the window: on macOS every shortcut takes ⌘ and is written with
// Apple's symbols, and the menu bar (which Rust makes) speaks the window's language and opens
// Settings; on Linux and Windows shortcuts take Ctrl and there is no menu bar to word.
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { backendWith, openC1 } from "../test/conversation";
import { openSettings } from "../test/settings";

afterEach(async () => {
  delete window.__decimaPlatform;
  window.localStorage.removeItem("decima.sendKey");
  await setLanguage("en");
});

/** Whether the window took this key press as a shortcut (it then prevents the default). */
function taken(init: { key: string; ctrlKey?: boolean; metaKey?: boolean; shiftKey?: boolean }): boolean {
  return !fireEvent.keyDown(document.body, init);
}

describe("on macOS", () => {
  it("answers ⌘ shortcuts, leaves Ctrl to the text fields, and lists them as ⌘N", async () => {
    window.__decimaPlatform = "macos";
    const backend = backendWith();
    const { user } = await openC1();
    await user.keyboard("{Meta>}n{/Meta}");
    await waitFor(() => expect(screen.getByTestId("new-conversation-title")).toHaveFocus());
    await user.keyboard("{Shift>}{Escape}{/Shift}");
    await waitFor(() => expect(screen.getByRole("textbox", { name: "Task" })).toHaveFocus());
    await user.keyboard("go{Enter}");
    await waitFor(() => expect(backend.channels).toHaveLength(1));
    await user.keyboard("{Meta>}.{/Meta}");
    await waitFor(() => expect(backend.callsOf("run_stop")).toHaveLength(1));
    // Ctrl+F and Ctrl+K move the caret in a Mac's text fields, and ⌃⌘ is the system's.
    for (const key of ["n", ".", "f", "k", "/", ","]) {
      expect(taken({ key, ctrlKey: true }), `Ctrl+${key}`).toBe(false);
      expect(taken({ key, ctrlKey: true, metaKey: true }), `⌃⌘${key}`).toBe(false);
    }

    await user.keyboard("{Meta>}/{/Meta}");
    const list = await screen.findByRole("dialog", { name: "Keyboard shortcuts" });
    expect(within(list).getAllByTestId("shortcut").map((s) => s.textContent)).toEqual([
      "⌘NNew conversation",
      "⇧EscGo to the task field",
      "⌘.Stop the run",
      "⌘FFind in this conversation",
      "⌘KSearch all conversations",
      "⌘,Open Settings",
      "⌘/Show these shortcuts",
    ]);
    // ⌘, from the list: Settings takes its place.
    await user.keyboard("{Meta>},{/Meta}");
    expect(await screen.findByRole("dialog", { name: "Settings" })).toBeInTheDocument();
    expect(screen.queryByRole("dialog", { name: "Keyboard shortcuts" })).toBeNull();
  });

  it("writes the keys as a Mac does: the task field, the send key, find", async () => {
    window.__decimaPlatform = "macos";
    const backend = backendWith();
    const { user } = await openC1();
    const box = screen.getByRole("textbox", { name: "Task" });
    expect(box).toHaveAttribute("placeholder", "What should the agent do? (↩ sends, ⇧↩ adds a line)");
    expect(screen.getByTitle("Find in this conversation (⌘F)")).toBeInTheDocument();

    await openSettings(user, "appearance");
    await user.click(within(screen.getByTestId("send-key-switch")).getByRole("button", { name: "⌘↩ sends" }));
    await user.keyboard("{Escape}");
    expect(box).toHaveAttribute("placeholder", "What should the agent do? (⌘↩ sends)");
    await user.type(box, "one{Enter}two");
    await user.keyboard("{Control>}{Enter}{/Control}");
    expect(box).toHaveValue("one\ntwo");
    expect(backend.callsOf("run_start")).toHaveLength(0);
    await user.keyboard("{Meta>}{Enter}{/Meta}");
    await waitFor(() => expect(backend.callsOf("run_start")).toHaveLength(1));

    await act(() => setLanguage("zh"));
    expect(screen.getByRole("textbox", { name: "任务" })).toHaveAttribute("placeholder", "要代理做什么？（⌘↩ 发送）");
    expect(screen.getByTitle("在此对话中查找（⌘F）")).toBeInTheDocument();
  });

  it("words the menu bar in the window's language, and its Settings… opens Settings", async () => {
    window.__decimaPlatform = "macos";
    const backend = backendWith();
    await openC1();
    await waitFor(() => expect(backend.menuWords).toHaveLength(1));
    expect(backend.menuWords[0]).toMatchObject({
      about: "About Decima",
      settings: "Settings…",
      quit: "Quit Decima",
      edit: "Edit",
      copy: "Copy",
      paste: "Paste",
      window: "Window",
      closeWindow: "Close Window",
    });

    await act(() => setLanguage("zh"));
    await waitFor(() => expect(backend.menuWords[backend.menuWords.length - 1]).toMatchObject({ about: "关于 Decima", settings: "设置…", quit: "退出 Decima", copy: "拷贝", closeWindow: "关闭窗口" }));
    act(() => backend.chooseInMenu({ type: "openSettings" }));
    expect(await screen.findByRole("dialog", { name: "设置" })).toBeInTheDocument();
  });
});

describe.each(["linux", "windows"])("on %s", (platform) => {
  it("answers Ctrl shortcuts, not the Windows key, and asks for no menu bar", async () => {
    window.__decimaPlatform = platform;
    const backend = backendWith();
    const { user } = await openC1();
    for (const key of ["n", ".", "f", "k", "/", ","]) expect(taken({ key, metaKey: true }), `Meta+${key}`).toBe(false);
    expect(screen.getByRole("textbox", { name: "Task" })).toHaveAttribute("placeholder", "What should the agent do? (Enter sends, Shift+Enter adds a line)");
    expect(screen.getByTitle("Find in this conversation (Ctrl+F)")).toBeInTheDocument();

    await user.keyboard("{Control>},{/Control}");
    expect(await screen.findByRole("dialog", { name: "Settings" })).toBeInTheDocument();
    expect(backend.callsOf("app_menu_watch")).toHaveLength(0);
  });
});
