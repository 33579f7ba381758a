import type { Messages } from "./en";

const zh: Messages = {
  app: {
    name: "Decima",
  },
  language: {
    label: "语言",
    en: "EN",
    zh: "中文",
  },
  sidebar: {
    heading: "对话",
    loading: "正在加载对话…",
    empty: "还没有对话。",
  },
  newConversation: {
    label: "新对话标题",
    placeholder: "标题",
    submit: "新建对话",
    creating: "正在创建…",
    defaultTitle: "未命名对话",
  },
  conversation: {
    messages_one: "{{count}} 条消息",
    messages_other: "{{count}} 条消息",
    tokens_one: "{{formatted}} 个 token",
    tokens_other: "{{formatted}} 个 token",
    updated: "更新于 {{when}}",
    rename: "重命名",
    renameLabel: "“{{title}}”的新标题",
    save: "保存",
    cancel: "取消",
    delete: "删除",
  },
  undo: {
    deleted: "已删除“{{title}}”",
    undo: "撤销",
    dismiss: "关闭",
  },
  error: {
    dismiss: "关闭",
    codes: {
      not_found: "未找到",
      invalid_input: "输入无效",
      storage: "存储错误",
      internal: "内部错误",
    },
  },
  main: {
    empty: "选择一个对话，或新建一个。",
    loading: "正在加载消息…",
    noMessages: "还没有消息——聊天功能将在后续版本中提供。",
  },
  message: {
    roles: {
      system: "系统",
      user: "用户",
      assistant: "助手",
      tool: "工具",
    },
    pinned: "已固定",
    reasoning: "推理过程",
    toolCalls: "工具调用",
    toolResult: "{{id}} 的结果",
    invalidJson: "不是有效的 JSON，按原样显示",
    truncated: "仅显示前 {{shown}} 个字符，共 {{total}} 个。",
    showAll: "显示全部",
  },
  time: {
    justNow: "刚刚",
  },
};

export default zh;
