import { screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { nest } from "../components/ConversationList";
import { setLanguage } from "../i18n";
import { FakeBackend } from "../test/fakeBackend";
import { conversation, message } from "../test/fixtures";
import { renderApp } from "../test/render";

beforeEach(async () => {
  await setLanguage("en");
});

describe("subagents' conversations", () => {
  it("nest under their parent, deeper ones under theirs, orphans at the top", () => {
    const list = [
      conversation({ id: "child", parentId: "root" }),
      conversation({ id: "other" }),
      conversation({ id: "root" }),
      conversation({ id: "grandchild", parentId: "child" }),
      conversation({ id: "orphan", parentId: "deleted" }),
    ];
    expect(nest(list).map((n) => `${n.conversation.id}:${n.depth}`)).toEqual([
      "other:0",
      "root:0",
      "child:1",
      "grandchild:2",
      "orphan:0",
    ]);
  });

  it("show a breadcrumb to the parent, and the brief as the parent's", async () => {
    new FakeBackend({
      conversations: [
        conversation({ id: "p", title: "Q3 ledger" }),
        conversation({ id: "k", title: "Check the March totals", parentId: "p", messageCount: 2 }),
      ],
      messages: {
        p: [message({ id: "p1", seq: 1, content: "Reconcile Q3" })],
        k: [
          message({ id: "k1", seq: 1, role: "user", content: "Goal: reconcile Q3\nTask: check March" }),
          message({ id: "k2", seq: 2, role: "assistant", content: "March matches." }),
        ],
      },
    }).install();
    const { user } = renderApp();
    const items = await screen.findAllByTestId("conversation-item");
    expect(items.map((i) => `${i.getAttribute("data-conversation-id")}:${i.getAttribute("data-depth")}`)).toEqual(["p:0", "k:1"]);
    await user.click(items[1]!);
    await screen.findByText("March matches.");
    const crumb = screen.getByTestId("breadcrumb");
    expect(crumb).toHaveTextContent("Q3 ledger");
    const first = screen.getAllByTestId("message")[0]!;
    expect(within(first).getByTestId("message-role")).toHaveTextContent("Brief from “Q3 ledger”");
    await user.click(within(crumb).getByTestId("breadcrumb-parent"));
    await waitFor(() => expect(screen.getByTestId("conversation-title")).toHaveTextContent("Q3 ledger"));
    expect(screen.queryByTestId("breadcrumb")).toBeNull();
  });
});
