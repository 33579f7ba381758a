import { screen, waitFor, within } from "@testing-library/react";
import { act } from "react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { backendWith } from "../test/conversation";
import { renderApp } from "../test/render";
import { openSettings } from "../test/settings";

beforeEach(async () => {
  await setLanguage("en");
});

const engine = { dockerAvailable: true, detail: "", hostShell: "sh (/bin/sh)", hostShellProblem: "" };

async function openRuns(settings = "Settings") {
  const utils = renderApp();
  const dialog = await openSettings(utils.user, "sandbox", settings);
  const image = await within(dialog).findByTestId("sandbox-image");
  return { ...utils, image };
}

describe("the sandbox image in the settings", () => {
  it("is built with its progress shown, and then says it is current", async () => {
    const backend = backendWith({
      sandbox: { ...engine, image: { name: "decima-sandbox:latest", present: false, current: false, sizeMb: null, created: null, buildingElsewhere: false } },
      imageBuild: [
        { type: "step", text: "installing the packages into a root filesystem" },
        { type: "progress", line: "Get:1 http://deb.debian.org/debian bookworm/main amd64 libc6 amd64 2.36-9 [2759 kB]" },
        { type: "progress", line: "Get:2 http://deb.debian.org/debian bookworm/main amd64 python3-pandas all 1.5.3 [3000 kB]" },
        { type: "progress", line: "Unpacking libc6:amd64 (2.36-9) ..." },
      ],
    });
    let finish = () => {};
    backend.imageBuildGate = new Promise<void>((resolve) => (finish = resolve));
    const { user, image } = await openRuns();
    expect(image).toHaveAttribute("data-state", "missing");
    expect(image).toHaveTextContent("The sandbox image decima-sandbox:latest is not built yet");
    await user.click(within(image).getByRole("button", { name: "Build" }));
    const progress = await within(image).findByRole("status");
    await waitFor(() => expect(progress).toHaveTextContent("installing the packages into a root filesystem · 2 packages fetched, 1 unpacked"));
    expect(progress).toHaveTextContent("Unpacking libc6:amd64");
    expect(within(image).getByRole("button", { name: "Build" })).toBeDisabled();
    await act(async () => finish());
    await waitFor(() => expect(image).toHaveAttribute("data-state", "current"));
    expect(image).toHaveTextContent("built from this version's recipe (1,374 MB");
    expect(within(image).queryByRole("status")).toBeNull();
    expect(backend.callsOf("sandbox_image_build")[0]?.args.force).toBe(false);
    // A current image is rebuilt only on purpose, from scratch.
    await user.click(within(image).getByRole("button", { name: "Rebuild" }));
    await waitFor(() => expect(backend.callsOf("sandbox_image_build")).toHaveLength(2));
    expect(backend.callsOf("sandbox_image_build")[1]?.args.force).toBe(true);
  });

  it("says why a build failed, and keeps the image it had, in Chinese too", async () => {
    const backend = backendWith({
      sandbox: { ...engine, image: { name: "decima-sandbox:latest", present: true, current: false, sizeMb: 900, created: "2026-10-01T00:00:00Z", buildingElsewhere: false } },
      imageBuildFailure: { code: "storage", message: "Docker could not build the sandbox image: mmdebstrap is not installed" },
    });
    await act(() => setLanguage("zh"));
    const { user, image } = await openRuns("设置");
    expect(image).toHaveAttribute("data-state", "outdated");
    expect(image).toHaveTextContent("是按其他配方构建的");
    await user.click(within(image).getByRole("button", { name: "更新" }));
    await waitFor(() => expect(within(image).getByTestId("sandbox-image-error")).toHaveTextContent("mmdebstrap is not installed"));
    expect(image).toHaveAttribute("data-state", "outdated");
    expect(backend.callsOf("sandbox_image_build")[0]?.args.force).toBe(false);
  });

  it("says when another process is building it, and a Build here waits for that one", async () => {
    const backend = backendWith({
      sandbox: { ...engine, image: { name: "decima-sandbox:latest", present: false, current: false, sizeMb: null, created: null, buildingElsewhere: true } },
      imageBuild: [{ type: "step", text: "waiting for another build of the image on this computer to finish" }],
    });
    let finish = () => {};
    backend.imageBuildGate = new Promise<void>((resolve) => (finish = resolve));
    const { user, image } = await openRuns();
    expect(within(image).getByTestId("sandbox-image-elsewhere")).toHaveTextContent("Another Decima on this computer is building it now");
    await user.click(within(image).getByRole("button", { name: "Build" }));
    await waitFor(() => expect(within(image).getByTestId("sandbox-image-progress")).toHaveTextContent("waiting for another build"));
    expect(within(image).queryByTestId("sandbox-image-elsewhere")).toBeNull();
    await act(async () => finish());
    await waitFor(() => expect(image).toHaveAttribute("data-state", "current"));
  });

  it("is not shown when no engine answers", async () => {
    backendWith();
    const { user } = renderApp();
    await openSettings(user, "sandbox");
    expect(await screen.findByTestId("sandbox-status")).toHaveTextContent("No Docker engine");
    expect(screen.queryByTestId("sandbox-image")).toBeNull();
  });
});
