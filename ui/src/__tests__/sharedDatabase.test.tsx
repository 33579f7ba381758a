import { act, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { setLanguage } from "../i18n";
import { backendWith, C1, openC1 } from "../test/conversation";
import { message } from "../test/fixtures";
import { renderApp } from "../test/render";
import { openSettings } from "../test/settings";

beforeEach(async () => {
  await setLanguage("en");
});

async function openDatabase(settings = "Settings") {
  const utils = renderApp();
  const dialog = await openSettings(utils.user, "store", settings);
  const section = await within(dialog).findByTestId("shared-database");
  return { ...utils, section };
}

describe("the shared database in the settings", () => {
  it("refuses what is not a reachable PostgreSQL URL, saves one with its password moved out, and goes back", async () => {
    const backend = backendWith();
    const { user, section } = await openDatabase();
    expect(within(section).getByTestId("shared-database-open")).toHaveTextContent(
      "This window uses this computer's file: /home/a/.local/share/decima/decima.db",
    );
    const url = within(section).getByTestId("shared-database-url");
    const save = within(section).getByTestId("shared-database-save");
    expect(save).toBeDisabled();

    await user.type(url, "mysql://db.lab/decima");
    await user.click(save);
    expect(await within(section).findByTestId("shared-database-error")).toHaveTextContent("a shared database is a postgres:// URL");

    await user.clear(url);
    await user.type(url, "postgres://unreachable/decima");
    await user.click(save);
    expect(await within(section).findByTestId("shared-database-error")).toHaveTextContent("connection refused");
    expect(backend.database.savedUrl).toBeNull();

    // The password is typed in its own field; it is never shown again, and the URL keeps none.
    await user.clear(url);
    await user.type(url, "postgres://ana@db.lab:5432/decima?sslmode=verify-full");
    await user.type(within(section).getByTestId("shared-database-password"), "s3cret");
    await user.click(save);
    expect(await within(section).findByTestId("shared-database-restart")).toHaveTextContent(
      "Saved: Decima opens postgres://ana@db.lab:5432/decima?sslmode=verify-full at its next start.",
    );
    expect(within(section).queryByTestId("shared-database-error")).toBeNull();
    expect(within(section).getByTestId("shared-database-password")).toHaveValue("");
    expect(within(section).getByTestId("shared-database-password")).toHaveAttribute("placeholder", "blank keeps the stored password");
    expect(within(section).getByTestId("shared-database-password-place")).toHaveTextContent("Password kept in the system keyring.");
    expect(section).not.toHaveTextContent("s3cret");
    expect(backend.callsOf("database_save").slice(-1)[0]?.args).toMatchObject({ password: "s3cret" });

    await user.click(within(section).getByTestId("shared-database-forget"));
    await waitFor(() => expect(within(section).queryByTestId("shared-database-restart")).toBeNull());
    expect(within(section).getByTestId("shared-database-url")).toHaveValue("");
    expect(within(section).queryByTestId("shared-database-password-place")).toBeNull();
  });

  it("says when the saved database could not be opened, and when the environment wins, in Chinese too", async () => {
    await setLanguage("zh");
    backendWith({
      database: {
        savedUrl: "postgres://ana@db.lab/decima",
        fromEnvironment: "postgres://ci@ci.lab/decima",
        open: "/home/a/.local/share/decima/decima.db",
        shared: false,
        passwordInKeyring: false,
        passwordFile: "/home/a/.local/share/decima/secrets.json",
        restartNeeded: false,
        openError: "cannot reach the database at postgres://ana@db.lab/decima: connection refused",
      },
    });
    const { section } = await openDatabase("设置");
    expect(within(section).getByTestId("shared-database-env")).toHaveTextContent("DECIMA_DATABASE_URL=postgres://ci@ci.lab/decima");
    expect(within(section).getByTestId("shared-database-open-error")).toHaveTextContent("无法打开下面选择的共享数据库");
    expect(within(section).getByTestId("shared-database-open-error")).toHaveTextContent("connection refused");
    expect(within(section).getByTestId("shared-database-password-place")).toHaveTextContent(
      "密码保存在 /home/a/.local/share/decima/secrets.json",
    );
  });
});

describe("a window on a shared store", () => {
  it("shows what another desktop wrote as soon as the database says so, without waiting for the poll", async () => {
    const backend = backendWith({
      database: {
        savedUrl: "postgres://ana@db.lab/decima",
        fromEnvironment: null,
        open: "postgres://ana@db.lab/decima",
        shared: true,
        passwordInKeyring: true,
        passwordFile: null,
        restartNeeded: false,
        openError: null,
      },
    });
    await openC1();
    await waitFor(() => expect(backend.changeWatcher).not.toBeNull());

    // Another analyst's desktop stores a message in the open conversation.
    (backend.messages.c1 ??= []).push(message({ id: "m3", seq: 3, role: "user", content: "From Bea's desk: use the Q3 ledger" }));
    backend.conversations = backend.conversations.map((c) => (c.id === C1.id ? { ...c, messageCount: 3 } : c));
    const started = Date.now();
    const runReads = backend.callsOf("execution_list").length;
    act(() => backend.changeWatcher?.onmessage({ conversationId: "c1", seq: 3, reconnected: false }));
    expect(await screen.findByText("From Bea's desk: use the Q3 ledger", undefined, { timeout: 1500 })).toBeInTheDocument();
    // Well inside the 4 s poll: the feed brought it.
    expect(Date.now() - started).toBeLessThan(1500);
    // The conversation's runs are read again too: another desktop's run shows in its history.
    await waitFor(() => expect(backend.callsOf("execution_list").length).toBeGreaterThan(runReads));
  });

  it("does not listen on this computer's file", async () => {
    const backend = backendWith();
    await openC1();
    await waitFor(() => expect(backend.callsOf("store_changes_watch").length).toBeGreaterThan(0));
    expect(backend.changeWatcher).toBeNull();
  });
});

describe("the About section of the settings", () => {
  it("names the release, the commit and the day of the build, in either language", async () => {
    backendWith();
    const { user } = renderApp();
    await user.click(await screen.findByRole("button", { name: "Settings" }));
    const about = await within(screen.getByRole("dialog", { name: "Settings" })).findByTestId("settings-about");
    expect(about).toHaveTextContent("About Decima");
    expect(about).toHaveTextContent("Decima 0.2.0, commit a6e16a4, built 2026-11-27");
    await act(async () => {
      await setLanguage("zh");
    });
    expect(about).toHaveTextContent("Decima 0.2.0，提交 a6e16a4，构建于 2026-11-27");
  });
});
