import type { TFunction } from "i18next";
import type { ConversationBusy } from "../bindings";
import { parseTime } from "./format";

/** Hours and minutes, as "14:02", in the UI's language. */
export function formatClock(iso: string, lang: string): string | null {
  const date = parseTime(iso);
  if (!date) return null;
  return date.toLocaleTimeString(lang, { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
}

/**
 * Why Send is disabled, in the UI's language, from what keeps the conversation busy. The
 * runtime's own English message is used only for a kind this UI does not know.
 */
export function busyReason(busy: ConversationBusy, t: TFunction, lang: string): string {
  switch (busy.kind) {
    case "running": {
      const time = busy.since ? formatClock(busy.since, lang) : null;
      return time ? t("composer.busy.running", { time }) : t("composer.busy.runningNoTime");
    }
    case "awaiting_user":
    case "chat":
    case "compression":
      return t(`composer.busy.${busy.kind}`);
    default:
      return t("composer.busy.other", { message: busy.message });
  }
}
