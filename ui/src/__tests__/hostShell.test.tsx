import { within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { backendWith } from "../test/conversation";
import { renderApp } from "../test/render";
import { openSettings } from "../test/settings";

beforeEach(async () => {
  await setLanguage("en");
});

const WINDOWS_CMD = "cmd.exe (C:\\Windows\\System32\\cmd.exe)";

describe("the host's shell in the settings", () => {
  it("names the shell chosen for host commands, in both languages", async () => {
    backendWith({ sandbox: { dockerAvailable: false, detail: "Docker Desktop is not running", image: null, hostShell: WINDOWS_CMD, hostShellProblem: "" } });
    const { user } = renderApp();
    const dialog = await openSettings(user, "sandbox");
    expect(await within(dialog).findByTestId("host-shell")).toHaveTextContent(`Commands on the host run in ${WINDOWS_CMD}.`);
    await setLanguage("zh");
    expect(await within(dialog).findByTestId("host-shell")).toHaveTextContent(`在本机运行的命令使用 ${WINDOWS_CMD}。`);
  });

  it("says why when no shell was found, and what that means for host runs", async () => {
    backendWith({
      sandbox: {
        dockerAvailable: true,
        detail: "",
        image: null,
        hostShell: null,
        hostShellProblem: "no shell found: neither powershell.exe nor pwsh.exe on PATH answered",
      },
    });
    const { user } = renderApp();
    const dialog = await openSettings(user, "sandbox");
    const line = await within(dialog).findByTestId("host-shell");
    expect(line).toHaveTextContent("No shell was found for commands on the host, so host runs cannot use the shell tool.");
    expect(line).toHaveTextContent("neither powershell.exe nor pwsh.exe on PATH answered");
  });
});
