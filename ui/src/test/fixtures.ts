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
    ...overrides,
  };
}
