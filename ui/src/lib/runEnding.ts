import type { TFunction } from "i18next";
import type { RunEndingView } from "../bindings";

/** How the analyst ended a run, in the window's words: the row where it ended and the todo it cancelled say the same. */
export function endedText(t: TFunction, ending: RunEndingView): string {
  return ending.by === "abort" ? t("run.aborted", { step: ending.step }) : t("run.stopped", { step: ending.step });
}
