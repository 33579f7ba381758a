const en = {
  app: {
    name: "Decima",
  },
  language: {
    label: "Language",
    en: "EN",
    zh: "中文",
  },
  sidebar: {
    heading: "Conversations",
    loading: "Loading conversations…",
    empty: "No conversations yet.",
  },
  newConversation: {
    label: "New conversation title",
    placeholder: "Title",
    submit: "New conversation",
    creating: "Creating…",
    defaultTitle: "Untitled conversation",
  },
  conversation: {
    messages_one: "{{count}} message",
    messages_other: "{{count}} messages",
    tokens_one: "{{formatted}} token",
    tokens_other: "{{formatted}} tokens",
    updated: "Updated {{when}}",
    rename: "Rename",
    renameLabel: "New title for “{{title}}”",
    save: "Save",
    cancel: "Cancel",
    delete: "Delete",
  },
  undo: {
    deleted: "Deleted “{{title}}”",
    undo: "Undo",
    dismiss: "Dismiss",
  },
  error: {
    dismiss: "Dismiss",
    codes: {
      not_found: "Not found",
      invalid_input: "Invalid input",
      storage: "Storage error",
      internal: "Internal error",
    },
  },
  main: {
    empty: "Select a conversation or create a new one.",
    loading: "Loading messages…",
    noMessages: "No messages yet — the chat arrives in a later version.",
  },
  message: {
    roles: {
      system: "System",
      user: "User",
      assistant: "Assistant",
      tool: "Tool",
    },
    pinned: "Pinned",
    reasoning: "Reasoning",
    toolCalls: "Tool calls",
    toolResult: "Result of {{id}}",
    invalidJson: "not valid JSON, shown as sent",
    truncated: "Showing the first {{shown}} of {{total}} characters.",
    showAll: "Show all",
  },
  time: {
    justNow: "just now",
  },
};

export default en;
export type Messages = typeof en;
