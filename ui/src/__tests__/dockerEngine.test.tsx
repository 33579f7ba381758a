import { waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { backendWith } from "../test/conversation";
import { renderApp } from "../test/render";
import { openSettings } from "../test/settings";

beforeEach(async () => {
  await setLanguage("en");
});

async function openEngine(settings = "Settings") {
  const utils = renderApp();
  const dialog = await openSettings(utils.user, "sandbox", settings);
  const engine = await within(dialog).findByTestId("docker-engine");
  return { ...utils, engine };
}

describe("the Docker engine in the settings", () => {
  it("takes a remote engine with its certificates, reads the engine's status again, and goes back to this computer's", async () => {
    const backend = backendWith({ sandbox: { dockerAvailable: true, detail: "", image: null, hostShell: "sh (/bin/sh)", hostShellProblem: "" } });
    const { user, engine } = await openEngine();
    const host = within(engine).getByTestId("docker-engine-host");
    expect(host).toHaveValue("");
    expect(host).toHaveAttribute("placeholder", "this computer's engine");
    expect(engine).toHaveTextContent(
      "A tcp:// engine needs the folder of its ca.pem, cert.pem and key.pem; an ssh://user@host engine uses your ssh keys.",
    );

    // An address without its certificates is refused in place, with what to do.
    await user.type(host, "tcp://engine.lab:2376");
    await user.click(within(engine).getByTestId("docker-engine-save"));
    expect(await within(engine).findByTestId("docker-engine-error")).toHaveTextContent("choose the folder that holds ca.pem");

    const statusReads = backend.callsOf("sandbox_status").length;
    await user.click(within(engine).getByTestId("docker-engine-choose"));
    expect(await within(engine).findByTestId("docker-engine-saved")).toHaveTextContent(
      "Runs in Docker now use tcp://engine.lab:2376 over mutual TLS.",
    );
    expect(within(engine).queryByTestId("docker-engine-error")).toBeNull();
    expect(within(engine).getByTestId("docker-engine-certs")).toHaveTextContent("Certificates: /home/a/team-certs");
    expect(backend.callsOf("sandbox_engine_save").slice(-1)[0]?.args).toMatchObject({ host: "tcp://engine.lab:2376", chooseCerts: true });
    await waitFor(() => expect(backend.callsOf("sandbox_status").length).toBeGreaterThan(statusReads));

    await user.click(within(engine).getByTestId("docker-engine-local"));
    expect(await within(engine).findByTestId("docker-engine-saved")).toHaveTextContent("Runs in Docker now use this computer's engine.");
    expect(within(engine).getByTestId("docker-engine-host")).toHaveValue("");
  });

  it("takes an engine reached through ssh, which needs no certificates", async () => {
    const backend = backendWith({ sandbox: { dockerAvailable: true, detail: "", image: null, hostShell: "sh (/bin/sh)", hostShellProblem: "" } });
    const { user, engine } = await openEngine();
    await user.type(within(engine).getByTestId("docker-engine-host"), "ssh://ana@engine.lab");
    await user.click(within(engine).getByTestId("docker-engine-save"));
    expect(await within(engine).findByTestId("docker-engine-saved")).toHaveTextContent(
      "Runs in Docker now use the engine at ssh://ana@engine.lab, reached through ssh with your own keys.",
    );
    expect(within(engine).queryByTestId("docker-engine-error")).toBeNull();
    expect(backend.callsOf("sandbox_engine_save").slice(-1)[0]?.args).toMatchObject({ host: "ssh://ana@engine.lab", chooseCerts: false });
  });

  it("says when DOCKER_HOST wins, in Chinese too", async () => {
    await setLanguage("zh");
    backendWith({
      sandbox: { dockerAvailable: true, detail: "", image: null, hostShell: "sh (/bin/sh)", hostShellProblem: "" },
      engine: { host: null, certPath: null, fromEnvironment: "tcp://ci.lab:2376" },
    });
    const { engine } = await openEngine("设置");
    expect(within(engine).getByTestId("docker-engine-env")).toHaveTextContent("启动 Decima 时设置了 DOCKER_HOST=tcp://ci.lab:2376");
    expect(within(engine).getByTestId("docker-engine-choose")).toHaveTextContent("选择证书…");
  });
});
