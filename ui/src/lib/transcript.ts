import type { MessageView } from "../bindings";
import { isToolError, TODO_WRITE } from "./toolResult";

/** A tool call's place: the assistant message that made it, and its index among that message's calls. */
export type CallPlace = { message: MessageView; index: number };

/**
 * Which loaded call each loaded tool result answers, by the result message's id, so the window
 * can show a call and its result as one card. Call ids are not unique in a conversation (some
 * servers number each step's calls from `call_0`), so a result answers the nearest assistant
 * message before it with a call of that id not answered yet, and in that message the first
 * such call. A result whose call is not loaded (a page began between them) has no place.
 * `messages` are in seq order, as the list holds them.
 */
export function pairResults(messages: readonly MessageView[]): Map<string, CallPlace> {
  const open = new Map<string, CallPlace[]>();
  const pairs = new Map<string, CallPlace>();
  for (const message of messages) {
    if (message.role === "assistant") {
      message.toolCalls.forEach((call, index) => {
        const waiting = open.get(call.id);
        if (waiting) waiting.push({ message, index });
        else open.set(call.id, [{ message, index }]);
      });
    } else if (message.role === "tool" && message.toolCallId !== null) {
      const waiting = open.get(message.toolCallId);
      const nearest = waiting?.[waiting.length - 1]?.message;
      if (!waiting || !nearest) continue;
      const at = waiting.findIndex((p) => p.message === nearest);
      const [place] = waiting.splice(at, 1);
      if (place) pairs.set(message.id, place);
    }
  }
  return pairs;
}

/** The key of a call in the maps below: its message and its index there (ids repeat). */
export function callKey(message: MessageView, index: number): string {
  return `${message.id}#${index}`;
}

/**
 * For each loaded `todo_write` call, the arguments of the loaded `todo_write` call before it
 * (null for the first), by `callKey`: what its plan replaced. A call whose result is a tool
 * error changed nothing, so the call after it is compared with the one before it.
 */
export function plansBefore(messages: readonly MessageView[], pairs: ReadonlyMap<string, CallPlace>): Map<string, string | null> {
  const before = new Map<string, string | null>();
  let last: { key: string; args: string } | null = null;
  for (const message of messages) {
    if (message.role === "assistant") {
      for (const [index, call] of message.toolCalls.entries()) {
        if (call.name !== TODO_WRITE) continue;
        const key = callKey(message, index);
        before.set(key, last?.args ?? null);
        last = { key, args: call.arguments };
      }
    } else if (message.role === "tool" && isToolError(message.content)) {
      const place = pairs.get(message.id);
      if (!place || last === null) continue;
      const key = callKey(place.message, place.index);
      // The refused plan was the last one sent: the one before it stands.
      if (last.key === key) {
        const previous: string | null = before.get(key) ?? null;
        last = previous === null ? null : { key: `${key}^`, args: previous };
      }
    }
  }
  return before;
}
