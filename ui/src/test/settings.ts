import { screen, within } from "@testing-library/react";
import type { SettingsSection } from "../components/SettingsDialog";
import type { renderApp } from "./render";

type User = ReturnType<typeof renderApp>["user"];

/**
 * Opens Settings with its button (named `label`, "设置" in Chinese) and shows `section`, as the
 * analyst does: a control in a section not shown is hidden, and role queries do not find it.
 */
export async function openSettings(user: User, section: SettingsSection = "models", label = "Settings"): Promise<HTMLElement> {
  await user.click(await screen.findByRole("button", { name: label }));
  const dialog = screen.getByRole("dialog", { name: label });
  if (section !== "models") await showSection(user, section);
  return dialog;
}

/** Picks a section of the open Settings by its tab, and answers its panel. */
export async function showSection(user: User, section: SettingsSection): Promise<HTMLElement> {
  const dialog = screen.getByTestId("settings-dialog");
  await user.click(within(dialog).getByTestId(`settings-tab-${section}`));
  return within(dialog).getByTestId(`settings-panel-${section}`);
}
