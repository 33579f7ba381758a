import type { ConversationSummary, MessageView } from "../bindings";

export function conversation(overrides: Partial<ConversationSummary> & { id: string }): ConversationSummary {
  return {
    title: `Conversation ${overrides.id}`,
    messageCount: 0,
    tokens: 0,
    createdAt: "2026-01-01T10:00:00Z",
    updatedAt: "2026-01-01T10:00:00Z",
    parentId: null,
    ...overrides,
  };
}

export function message(overrides: Partial<MessageView> & { id: string; seq: number }): MessageView {
  return {
    role: "user",
    name: null,
    content: "",
    reasoning: null,
    toolCalls: [],
    toolCallId: null,
    tokens: 0,
    pinned: false,
    createdAt: "2026-01-01T10:00:00Z",
    answer: null,
    ...overrides,
  };
}

/** A configured provider, as the fake backend keeps it: with one, the window is past its first start. */
export const LOCAL_PROVIDER = { name: "local", model: "qwen3", baseUrl: "http://localhost:8080/v1", contextWindow: 32000, hasApiKey: false };
