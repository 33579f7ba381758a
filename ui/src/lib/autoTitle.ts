import { resources } from "../i18n";

/** Titles longer than this end in an ellipsis, as the runtime's `title_from` makes them. */
const TITLE_CHARS = 60;

/** Whether `title` is the one a new conversation gets when none is typed, in any language. */
export function isDefaultTitle(title: string): boolean {
  return Object.values(resources).some((r) => r.translation.newConversation.defaultTitle === title.trim());
}

/**
 * A title from the first message sent: its first line that is not blank, shortened. The
 * conversation is titled by what the analyst asked, not "Untitled conversation"; they rename it
 * as before when they like.
 */
export function titleFrom(task: string): string | null {
  const line = task
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "");
  if (!line) return null;
  const chars = [...line].filter((c) => c >= " ");
  return chars.length > TITLE_CHARS ? `${chars.slice(0, TITLE_CHARS).join("")}…` : chars.join("");
}
