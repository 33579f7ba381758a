import { screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { backendWith, openC1 } from "../test/conversation";

beforeEach(async () => {
  await setLanguage("en");
});

describe("a conversation's run options", () => {
  it("follow the settings until changed, save each change, and refuse a bad budget in place", async () => {
    const backend = backendWith();
    backend.providers = [
      { name: "local", model: "qwen3", baseUrl: "http://localhost:8080/v1", contextWindow: 32000, hasApiKey: false },
      { name: "careful", model: "claude", baseUrl: "https://api.anthropic.com", contextWindow: 200000, hasApiKey: true },
    ] as typeof backend.providers;
    backend.settings = { provider: "local", reviewerProvider: null, sandbox: "host" };
    const { user } = await openC1();
    const button = await screen.findByTestId("run-options-button");
    expect(button).toHaveTextContent("local · host · 50 calls · tenth man: tool and final review");

    await user.click(button);
    const form = screen.getByTestId("run-options");
    expect(within(form).getByTestId("run-options-provider")).toHaveDisplayValue("As in Settings (local)");
    await user.selectOptions(within(form).getByTestId("run-options-provider"), "careful");
    await user.selectOptions(within(form).getByTestId("run-options-sandbox"), "docker");
    await user.selectOptions(within(form).getByTestId("run-options-tenth-man"), "off");
    await waitFor(() => expect(button).toHaveTextContent("careful · Docker · 50 calls · tenth man off"));
    expect(backend.callsOf("run_options_save").slice(-1)[0]?.args).toEqual({
      conversationId: "c1",
      provider: "careful",
      sandbox: "docker",
      maxSteps: null,
      tenthMan: "off",
    });

    const steps = within(form).getByTestId("run-options-steps");
    await user.type(steps, "5000{Enter}");
    expect(await within(form).findByTestId("run-options-error")).toHaveTextContent("between 1 and 1000");
    expect(screen.queryByTestId("error-banner")).toBeNull();
    await user.clear(steps);
    await user.type(steps, "120{Enter}");
    await waitFor(() => expect(within(form).queryByTestId("run-options-error")).toBeNull());
    await waitFor(() => expect(button).toHaveTextContent("120 calls"));
  });
});
