import { act, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { backendWith, openC1, startRun } from "../test/conversation";
import { message } from "../test/fixtures";

const PNG = { mediaType: "image/png", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==" };

beforeEach(async () => {
  await setLanguage("en");
});

function history(extra: Parameters<typeof message>[0][]) {
  return {
    c1: [
      message({ id: "m1", seq: 1, content: "Chart the revenue" }),
      message({ id: "m2", seq: 2, role: "assistant", content: "", toolCalls: [{ id: "call_chart", name: "mcp__plots__chart", arguments: "{}" }] }),
      ...extra.map(message),
    ],
  };
}

describe("images a tool returned", () => {
  it("show on the tool's result in the history, and open to full size and back", async () => {
    const backend = backendWith({
      messages: history([
        {
          id: "m3",
          seq: 3,
          role: "tool",
          name: "mcp__plots__chart",
          toolCallId: "call_chart",
          content: "chart drawn\n[image 1: image/png, saved in the workspace as .decima/mcp/chart-1.png]",
        },
        { id: "m4", seq: 4, role: "assistant", content: "Revenue rose." },
      ]),
      toolImages: { "c1/call_chart": [PNG] },
    });
    const { user } = await openC1("Revenue rose.");
    const image = await screen.findByRole("img", { name: "Image 1 returned by mcp__plots__chart" });
    expect(image).toHaveAttribute("src", `data:image/png;base64,${PNG.data}`);
    // The MCP tool is named in words on the card of its call and result, the offered name kept;
    // the images are on the result, on that card.
    const card = screen.getByTestId("tool-card");
    expect(within(card).getByTestId("tool-call-name")).toHaveTextContent("chart (plots)");
    expect(within(card).getByTestId("tool-call-name")).toHaveAttribute("data-tool", "mcp__plots__chart");
    expect(within(within(card).getByTestId("tool-result")).getByRole("img")).toBe(image);
    expect(screen.queryByTestId("message-name")).toBeNull();
    expect(backend.callsOf("tool_result_images")).toEqual([
      { cmd: "tool_result_images", args: { conversationId: "c1", callId: "call_chart" } },
    ]);
    const toggle = screen.getByRole("button", { name: "Image 1 returned by mcp__plots__chart" });
    expect(toggle).toHaveAttribute("aria-expanded", "false");
    await user.click(toggle);
    expect(toggle).toHaveAttribute("aria-expanded", "true");
    expect(toggle).toHaveAttribute("title", "Show smaller");
    await user.click(toggle);
    expect(toggle).toHaveAttribute("aria-expanded", "false");
  });

  it("are not asked for on a result that names none", async () => {
    const backend = backendWith({
      messages: history([
        { id: "m3", seq: 3, role: "tool", name: "shell", toolCallId: "call_chart", content: "exit 0\n[image of a cat]" },
        { id: "m4", seq: 4, role: "assistant", content: "No chart." },
      ]),
    });
    await openC1("No chart.");
    expect(screen.queryByTestId("tool-images")).toBeNull();
    expect(backend.callsOf("tool_result_images")).toEqual([]);
  });

  it("show on the live card once the call is done, in Chinese too", async () => {
    const backend = backendWith({ toolImages: { "c1/call_chart": [PNG, { ...PNG, mediaType: "image/webp" }] } });
    const { user } = await openC1();
    await startRun(backend, user);
    act(() => backend.emit({ type: "tool_started", call_id: "call_chart", name: "mcp__plots__chart", arguments: "{}" }));
    const card = await screen.findByTestId("live-tool-card");
    expect(within(card).queryByTestId("tool-images")).toBeNull();
    await act(() => setLanguage("zh"));
    act(() =>
      backend.emit({ type: "tool_finished", call_id: "call_chart", name: "mcp__plots__chart", exit_code: null, duration_ms: 40, class: null, ran: true, images: 2 }),
    );
    const images = await within(card).findAllByRole("img");
    expect(images.map((i) => i.getAttribute("alt"))).toEqual(["mcp__plots__chart 返回的第 1 张图片", "mcp__plots__chart 返回的第 2 张图片"]);
    expect(images[1]).toHaveAttribute("src", `data:image/webp;base64,${PNG.data}`);
  });

  it("that cannot be read say so where they would be", async () => {
    const backend = backendWith({
      messages: history([
        {
          id: "m3",
          seq: 3,
          role: "tool",
          name: "mcp__plots__chart",
          toolCallId: "call_chart",
          content: "[image 1: image/png, saved in the workspace as .decima/mcp/chart-1.png]",
        },
        { id: "m4", seq: 4, role: "assistant", content: "Revenue rose." },
      ]),
    });
    backend.fail("tool_result_images", { code: "storage", message: "database is locked" });
    await openC1("Revenue rose.");
    await waitFor(() =>
      expect(screen.getByTestId("tool-images-error")).toHaveTextContent("The images of this result could not be read: database is locked"),
    );
  });
});
