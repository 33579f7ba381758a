import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import i18n, { LANGUAGE_STORAGE_KEY, initialLanguage, setLanguage } from "../i18n";
import { FakeBackend } from "../test/fakeBackend";
import { LOCAL_PROVIDER, conversation } from "../test/fixtures";
import { renderApp } from "../test/render";

describe("language switch", () => {
  it("renders Chinese labels, saves the choice and switches back", async () => {
    new FakeBackend({ conversations: [conversation({ id: "c1", title: "Hello", messageCount: 2 })], providers: [LOCAL_PROVIDER] }).install();
    const { user } = renderApp();
    await screen.findByTestId("conversation-item");
    const sw = screen.getByTestId("language-switch");
    expect(within(sw).getByRole("button", { name: "EN" })).toHaveAttribute("aria-pressed", "true");

    await user.click(within(sw).getByRole("button", { name: "中文" }));

    expect(screen.getByTestId("new-conversation-submit")).toHaveTextContent("新建对话");
    expect(screen.getByTestId("new-conversation-title")).toHaveAttribute("placeholder", "标题");
    expect(screen.getByTestId("empty-state")).toHaveTextContent("打开一个对话，或新建一个。");
    expect(screen.getByTestId("conversation-item")).toHaveTextContent("2 条消息");
    expect(within(sw).getByRole("button", { name: "中文" })).toHaveAttribute("aria-pressed", "true");
    expect(window.localStorage.getItem(LANGUAGE_STORAGE_KEY)).toBe("zh");
    expect(document.documentElement.lang).toBe("zh-CN");

    await user.click(within(sw).getByRole("button", { name: "EN" }));
    expect(screen.getByTestId("new-conversation-submit")).toHaveTextContent("New conversation");
    expect(window.localStorage.getItem(LANGUAGE_STORAGE_KEY)).toBe("en");
  });

  it("uses the translated default title for a blank new conversation", async () => {
    const backend = new FakeBackend().install();
    const { user } = renderApp();
    await screen.findByTestId("conversations-empty");
    await user.click(screen.getByRole("button", { name: "中文" }));

    await user.click(screen.getByTestId("new-conversation-submit"));

    await waitFor(() =>
      expect(backend.callsOf("conversation_create")).toEqual([
        { cmd: "conversation_create", args: { title: "未命名对话" } },
      ]),
    );
    expect(await screen.findByTestId("no-messages")).toHaveTextContent("还没有消息");
    // The first task names it; a titled conversation keeps its title.
    await user.type(screen.getByTestId("composer-input"), "核对第三季度的发票{Enter}");
    await waitFor(() => expect(backend.callsOf("conversation_rename")[0]?.args).toMatchObject({ title: "核对第三季度的发票" }));
  });

  it("starts in the stored language and ignores unknown values", () => {
    window.localStorage.setItem(LANGUAGE_STORAGE_KEY, "zh");
    expect(initialLanguage()).toBe("zh");
    window.localStorage.setItem(LANGUAGE_STORAGE_KEY, "fr");
    const system = navigator.language.toLowerCase().startsWith("zh") ? "zh" : "en";
    expect(initialLanguage()).toBe(system);
  });
});

describe("numbers in sentences", () => {
  it("are written with the language's separators in both languages, and text passes unchanged", async () => {
    await setLanguage("zh");
    expect(i18n.t("mcp.toolTokens", { tokens: 1665 })).toBe("1,665 个 token");
    expect(i18n.t("recovery.changes.messages", { count: 3000 })).toBe("存储了 3,000 条消息");
    // A caller that formatted the number itself is left alone.
    expect(i18n.t("mcp.toolTokens", { tokens: "1.6K" })).toBe("1.6K 个 token");
    await setLanguage("en");
    expect(i18n.t("mcp.toolTokens", { tokens: 1665 })).toBe("1,665 tokens");
    expect(i18n.t("recovery.changes.messages", { count: 1 })).toBe("1 message stored");
    expect(i18n.t("recovery.changes.messages", { count: 12000 })).toBe("12,000 messages stored");
  });
});
