import { screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { backendWith, openC1 } from "../test/conversation";
import { usageAt } from "../test/fakeBackend";
import { renderApp } from "../test/render";

beforeEach(async () => {
  await setLanguage("en");
});

/** Errors show where the action was taken, never in the banner behind it, and clear on success. */
describe("errors where they happen", () => {
  it("a refused send is said above the task field and cleared by the next send", async () => {
    const backend = backendWith();
    backend.fail("run_start", { code: "provider", message: "Nothing answered at http://localhost:9/v1" });
    const { user } = await openC1();
    await user.type(screen.getByRole("textbox", { name: "Task" }), "Count the invoices");
    await user.click(screen.getByRole("button", { name: "Send" }));
    const error = await screen.findByTestId("send-error");
    expect(error).toHaveTextContent("Nothing answered at http://localhost:9/v1");
    expect(screen.queryByTestId("error-banner")).toBeNull();
    // The task stays for the retry.
    expect(screen.getByRole("textbox", { name: "Task" })).toHaveValue("Count the invoices");
    backend.succeed("run_start");
    await user.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(screen.queryByTestId("send-error")).toBeNull());
  });

  it("a failed preview is said in the compression dialog", async () => {
    const backend = backendWith({ usage: usageAt(0.75) });
    backend.fail("compression_preview", { code: "provider", message: "the summariser timed out" });
    const { user } = await openC1();
    await user.click(await screen.findByTestId("context-compress"));
    const dialog = screen.getByRole("dialog", { name: "Compress context" });
    await user.click(within(dialog).getByTestId("compress-preview"));
    expect(await within(dialog).findByTestId("compress-error")).toHaveTextContent("the summariser timed out");
    expect(screen.queryByTestId("error-banner")).toBeNull();
    backend.succeed("compression_preview");
    await user.click(within(dialog).getByTestId("compress-preview"));
    await within(dialog).findByTestId("compress-preview-result");
    expect(within(dialog).queryByTestId("compress-error")).toBeNull();
  });

  it("a provider that cannot be added is said under the form, inside Settings", async () => {
    const backend = backendWith();
    backend.fail("provider_add", { code: "invalid_input", message: "a provider named local exists already" });
    const { user } = renderApp();
    await user.click(await screen.findByRole("button", { name: "Settings" }));
    const dialog = await screen.findByTestId("settings-dialog");
    // The add form is the first start's: its name, address and model, then Add and test.
    await user.type(within(dialog).getByTestId("setup-name"), "local");
    await user.type(within(dialog).getByTestId("setup-base-url"), "http://localhost:8080/v1");
    await user.type(within(dialog).getByTestId("setup-model"), "qwen3");
    await user.click(within(dialog).getByTestId("setup-add"));
    expect(await within(within(dialog).getByTestId("provider-form")).findByTestId("setup-error")).toHaveTextContent("exists already");
    expect(backend.callsOf("provider_test")).toHaveLength(0);
    expect(screen.queryByTestId("error-banner")).toBeNull();
  });

  it("a context that cannot be measured is said in the meter's place", async () => {
    const backend = backendWith();
    backend.fail("context_usage", { code: "storage", message: "database is locked" });
    await openC1();
    const failed = await screen.findByTestId("context-failed");
    expect(failed).toHaveTextContent("Context usage could not be measured");
    expect(failed).toHaveAttribute("title", "database is locked");
    expect(screen.queryByTestId("error-banner")).toBeNull();
  });
});

describe("editing a provider", () => {
  it("changes its address, model and window in place, and a bad address is said under the form", async () => {
    const backend = backendWith();
    backend.providers = [{ name: "local", model: "qwen3", baseUrl: "http://localhost:8080/v1", contextWindow: 32000, hasApiKey: false }];
    const { user } = renderApp();
    await user.click(await screen.findByRole("button", { name: "Settings" }));
    const row = await screen.findByTestId("provider");
    await user.click(within(row).getByTestId("provider-edit"));
    const form = within(row).getByTestId("provider-editor");
    expect(within(form).getByTestId("edit-model")).toHaveValue("qwen3");
    await user.clear(within(form).getByTestId("edit-base-url"));
    await user.type(within(form).getByTestId("edit-base-url"), "localhost:9000");
    await user.click(within(form).getByTestId("edit-save"));
    expect(await within(form).findByTestId("edit-error")).toHaveTextContent("invalid base URL");

    await user.clear(within(form).getByTestId("edit-base-url"));
    await user.type(within(form).getByTestId("edit-base-url"), "http://gpu-box:8000/v1");
    await user.clear(within(form).getByTestId("edit-model"));
    await user.type(within(form).getByTestId("edit-model"), "qwen3-32b");
    await user.click(within(form).getByTestId("edit-save"));
    await waitFor(() => expect(screen.queryByTestId("provider-editor")).toBeNull());
    expect(backend.callsOf("provider_update").slice(-1)[0]?.args).toEqual({
      name: "local",
      baseUrl: "http://gpu-box:8000/v1",
      model: "qwen3-32b",
      contextWindow: 32000,
      apiKey: null,
    });
    await waitFor(() => expect(screen.getByTestId("provider")).toHaveTextContent("qwen3-32b · http://gpu-box:8000/v1"));
  });

  it("edits a provider's prices and cache lifetime, and refuses a partial set of prices", async () => {
    const backend = backendWith();
    backend.providers = [
      { name: "claude", kind: "anthropic", model: "claude-sonnet-4-5", baseUrl: "https://api.anthropic.com", contextWindow: 200000, hasApiKey: true },
    ];
    const { user } = renderApp();
    await user.click(await screen.findByRole("button", { name: "Settings" }));
    const row = await screen.findByTestId("provider");
    await user.click(within(row).getByTestId("provider-edit"));
    const form = within(row).getByTestId("provider-editor");
    await user.type(within(form).getByTestId("edit-price-input"), "3");
    await user.click(within(form).getByTestId("edit-save"));
    expect(await within(form).findByTestId("edit-error")).toHaveTextContent("Give all four prices, or none.");
    expect(backend.callsOf("provider_pricing_save")).toHaveLength(0);

    await user.type(within(form).getByTestId("edit-price-cachedInput"), "0.3");
    await user.type(within(form).getByTestId("edit-price-cacheWrite"), "3.75");
    await user.type(within(form).getByTestId("edit-price-output"), "15");
    await user.selectOptions(within(form).getByTestId("edit-cache-ttl"), "1h");
    await user.click(within(form).getByTestId("edit-save"));
    await waitFor(() => expect(screen.queryByTestId("provider-editor")).toBeNull());
    expect(backend.callsOf("provider_pricing_save").slice(-1)[0]?.args).toEqual({
      name: "claude",
      prices: { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
      cacheTtl: "1h",
    });
    // Opened again, the form shows what was saved.
    await user.click(within(screen.getByTestId("provider")).getByTestId("provider-edit"));
    expect(within(screen.getByTestId("provider-editor")).getByTestId("edit-price-output")).toHaveValue("15");
  });
});
