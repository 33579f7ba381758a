import { screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { FakeBackend } from "../test/fakeBackend";
import { renderApp } from "../test/render";

beforeEach(async () => {
  await setLanguage("en");
});

describe("the first start", () => {
  it("says a provider is needed, sets one up from the server's model list, tests it and makes it the default", async () => {
    const backend = new FakeBackend().install();
    backend.modelList = ["llama3.1:8b", "qwen3:8b"];
    const { user } = renderApp();
    const first = await screen.findByTestId("first-start");
    expect(first).toHaveTextContent("none is set up yet");
    await user.click(within(first).getByTestId("first-start-setup"));

    const dialog = screen.getByRole("dialog", { name: "Set up a model provider" });
    await waitFor(() => expect(within(dialog).getByRole("option", { name: "Ollama (local)" })).toBeInTheDocument());
    await user.selectOptions(within(dialog).getByTestId("setup-preset"), "ollama");
    expect(within(dialog).getByTestId("setup-base-url")).toHaveValue("http://localhost:11434/v1");
    await user.click(within(dialog).getByTestId("setup-find-models"));
    expect(await within(dialog).findByTestId("setup-models-found")).toHaveTextContent("2 models");
    // The preset's own model is listed: it stays chosen.
    expect(within(dialog).getByTestId("setup-model")).toHaveValue("qwen3:8b");
    await user.selectOptions(within(dialog).getByTestId("setup-model"), "llama3.1:8b");
    await user.click(within(dialog).getByTestId("setup-add"));

    await waitFor(() => expect(screen.queryByTestId("provider-setup")).toBeNull());
    expect(backend.callsOf("provider_add")[0]?.args).toMatchObject({ name: "ollama", preset: "ollama", model: "llama3.1:8b" });
    expect(backend.callsOf("provider_test")).toHaveLength(1);
    expect(backend.settings.provider).toBe("ollama");
    // The empty window now says what to do next.
    expect(await screen.findByTestId("empty-state")).toHaveTextContent("Create a conversation: give it a title");
  });

  it("keeps the setup open with one plain sentence when the server does not answer", async () => {
    const backend = new FakeBackend().install();
    backend.probeFailure = { kind: "unreachable", url: "http://localhost:9/v1", status: null, detail: "connection refused" };
    const { user } = renderApp();
    await user.click(await screen.findByTestId("first-start-setup"));
    const dialog = screen.getByRole("dialog", { name: "Set up a model provider" });
    await user.type(within(dialog).getByTestId("setup-name"), "mine");
    await user.type(within(dialog).getByTestId("setup-base-url"), "http://localhost:9/v1");
    await user.click(within(dialog).getByTestId("setup-find-models"));
    expect(await within(dialog).findByTestId("setup-models-note")).toHaveTextContent("Type the model's name instead");
    await user.type(within(dialog).getByTestId("setup-model"), "my-model");
    await user.click(within(dialog).getByTestId("setup-add"));
    expect(await within(dialog).findByTestId("setup-test-failed")).toHaveTextContent("http://localhost:9/v1");
    expect(backend.settings.provider).toBeNull();
    // A second try replaces the provider the failed one added.
    backend.probeFailure = null;
    await user.click(within(dialog).getByTestId("setup-add"));
    await waitFor(() => expect(screen.queryByTestId("provider-setup")).toBeNull());
    expect(backend.providers.map((p) => p.name)).toEqual(["mine"]);
    expect(backend.settings.provider).toBe("mine");
  });
});
