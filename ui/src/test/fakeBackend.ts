import { mockIPC } from "@tauri-apps/api/mocks";
import type { Channel } from "@tauri-apps/api/core";
import type {
  AppMenuAction,
  FigureView,
  AppMenuLabels,
  FilePreview,
  WorkspaceFileView,
  AppError,
  CompactionMarker,
  CompressionLevel,
  CompressionPreview,
  ContextUsage,
  ConversationBusy,
  ConversationSummary,
  ExecutionView,
  DatabaseView,
  FileDrag,
  McpCheckView,
  McpServerView,
  ToolImageView,
  ImageBuildEvent,
  SandboxStatus,
  StoreChange,
  MessagePage,
  MessageView,
  PageAt,
  ReviewView,
  RunEvent,
  RunUpdate,
  Strategy,
  SearchHitView,
  PricesView,
  ProviderProbe,
  ThresholdsView,
  WindowSourceView,
  WorkbenchSettings,
} from "../bindings";
import type { RunEnded } from "../run/state";

export type Call = { cmd: string; args: Record<string, unknown> };

/** The page of `all` (a conversation's live messages, in seq order) that message_page reads. */
export function pageOf(all: MessageView[], at: PageAt, limit: number): MessagePage {
  let page: MessageView[];
  if (at.kind === "end" || at.kind === "before") {
    const bound = at.kind === "end" ? Infinity : at.seq;
    const older = all.filter((m) => m.seq < bound);
    page = older.slice(Math.max(0, older.length - limit));
  } else if (at.kind === "after") {
    page = all.filter((m) => m.seq > at.seq).slice(0, limit);
  } else {
    const upTo = all.filter((m) => m.seq <= at.seq);
    const above = upTo.slice(Math.max(0, upTo.length - Math.ceil(limit / 2)));
    const below = all.filter((m) => m.seq > at.seq).slice(0, limit - above.length);
    page = [...above, ...below];
    const short = limit - page.length;
    const first = page[0];
    if (short > 0 && first) {
      const earlier = all.filter((m) => m.seq < first.seq);
      page = [...earlier.slice(Math.max(0, earlier.length - short)), ...page];
    }
  }
  const first = page[0];
  const last = page[page.length - 1];
  return {
    messages: page,
    hasEarlier: first !== undefined && all.some((m) => m.seq < first.seq),
    hasLater: last !== undefined && all.some((m) => m.seq > last.seq),
    total: all.length,
  };
}

/**
 * An in-memory stand-in for the Rust commands, installed through mockIPC.
 * It records every call and can be told to fail a command with an AppError.
 */
export class FakeBackend {
  readonly calls: Call[] = [];
  conversations: ConversationSummary[];
  deleted: ConversationSummary[] = [];
  messages: Record<string, MessageView[]>;
  /** What context_usage answers; null rejects it as not found. */
  usage: ContextUsage | null = usageAt(0.3);
  /** Whether context_usage refuses for want of a provider while none is set up. */
  noProviderForUsage = false;
  /** executionList answers, by conversation id. */
  executions: Record<string, ExecutionView[]> = {};
  interrupted: ExecutionView[] = [];
  review: ReviewView | null = null;
  /** The newest stored review, what review_latest answers. */
  latestReview: ReviewView | null = null;
  /** Every page message_page was asked for, in order. */
  readonly pageReads: PageAt[] = [];
  /** What the open dialog picks: a file's contents as conversation_import reads them (null
   *  cancels the dialog), or the error the import fails with. */
  picked: { title: string; messages: MessageView[] } | AppError | null = null;
  /** Dropped files by path: the conversation each imports as, or the error it fails with. */
  droppable: Record<string, { title: string; messages: MessageView[] } | string> = {};
  /** Each conversation's own run options, as run_options_save stored them. */
  runOptions: Record<string, { provider: string | null; sandbox: string | null; maxSteps: number | null; tenthMan: string | null }> = {};
  /** Each conversation's chosen workspace folder. */
  workspaces: Record<string, string> = {};
  /** Conversations whose messages are quick chats. */
  quick: Record<string, boolean> = {};
  /** Each provider's own tenth man default. */
  providerTenthMan: Record<string, string | null> = {};
  /** What workspace_census counts, by `<conversation>/<sandbox>` (none: empty). */
  census: Record<string, { files: number; bytes: number }> = {};
  /** What workspace_copy_across answers, or fails with. */
  copyAcross: { copied: string[]; kept: string[]; bytes: number } | AppError = { copied: [], kept: [], bytes: 0 };
  /** Files left in a conversation's host folder while it works in Docker. */
  leftOnHost: Record<string, number> = {};
  /** Where the save dialog of table_save_csv puts the file (null cancels it). */
  csvSaveTo: string | null = "/home/analyst/Documents/table.csv";
  /** The title conversation_title_from_model gives (null: none). */
  modelTitle: string | null = null;
  /** What conversation_export_report writes (null: the dialog was cancelled), or fails with. */
  report: { path: string; charts: number; tables: number; findings: number; leftOut: string[] } | AppError | null = {
    path: "/home/analyst/Documents/Invoices 2026-12-02 report.html",
    charts: 2,
    tables: 1,
    findings: 3,
    leftOut: [],
  };
  /** What plan_rollback_preview answers (or fails with). */
  rollbackPreview: unknown = {
    added: ["chart.png"],
    changed: ["data.csv"],
    removed: [],
    addedCount: 1,
    changedCount: 1,
    removedCount: 0,
    messagesSince: 6,
    workspaceUnknown: null,
  };
  /** Each run's own review, by execution id: what review_latest answers when asked for one. */
  runReviews: Record<string, ReviewView> = {};
  /** What the folder dialog picks (null cancels it). */
  pickedFolder: string | null = null;
  /** What provider_models lists (null: the server does not answer). */
  modelList: string[] | null = null;
  /** What search_messages refuses with, when set. */
  searchFailure: AppError | null = null;
  /** Each answer's figures, by conversation and seq: what message_figures answers. */
  figures: Record<string, Record<number, FigureView[]>> = {};
  providers: {
    name: string;
    model: string;
    baseUrl: string;
    contextWindow: number;
    hasApiKey: boolean;
    keyFile?: string | null;
    thresholds?: ThresholdsView;
    kind?: string;
    prices?: PricesView | null;
    cacheTtl?: string;
    contextWindowSource?: WindowSourceView;
    servedWindow?: number | null;
    structuredOutput?: boolean | null;
  }[] = [];
  /** The workbench settings settings_get answers and settings_save replaces. */
  settings: WorkbenchSettings = { provider: null, reviewerProvider: null, sandbox: "host" };
  presets: { id: string; name: string; kind: string; source: string | null; createdAt: string }[] = [];
  /** What the page reported of its first paint (`app_painted`), in order. */
  painted: { firstPaint: number | null; firstFrame: number }[] = [];
  /** The MCP servers the settings list, and what checking each finds (an error message fails it). */
  mcpServers: McpServerView[] = [];
  /** What each server last wrote to stderr, recorded with a failed check. */
  mcpStderr: Record<string, string[]> = {};
  mcpChecks: Record<string, McpCheckView | string> = {};
  /** The servers each conversation switched off. */
  mcpOff: Record<string, string[]> = {};
  /** What sandbox_status answers. */
  sandbox: SandboxStatus = {
    dockerAvailable: false,
    detail: "no engine at unix:///var/run/docker.sock",
    image: null,
    hostShell: "sh (/bin/sh)",
    hostShellProblem: "",
  };
  /** The events an image build reports, and how it fails (if it does). */
  imageBuild: ImageBuildEvent[] = [];
  imageBuildFailure: AppError | null = null;
  /** Held until resolved: the build is still going while a test looks at its progress. */
  imageBuildGate: Promise<void> | null = null;
  /** The images of tool results, by `conversation/call` id. */
  toolImages: Record<string, ToolImageView[]> = {};
  /** Where keys go when no keyring service runs (null: the keyring). */
  keyFile: string | null = null;
  /** How provider_test fails, if it does. */
  probeFailure: { kind: string; url: string; status: number | null; detail: string } | null = null;
  /** What a passed provider_test learned of the window and the server (nothing, by default). */
  probeFacts: Pick<ProviderProbe, "contextWindow" | "contextWindowSource" | "windowWarning" | "structuredOutput"> = {
    contextWindow: null,
    contextWindowSource: null,
    windowWarning: null,
    structuredOutput: null,
  };
  /** What run_skip_review answers: whether a final review of that execution was running. */
  reviewSkippable = true;
  /** Whether the export's save dialog is cancelled. */
  exportCancelled = false;
  /** Compactions in force, by conversation id. */
  compactions: Record<string, CompactionMarker[]> = {};
  /** What conversation_busy answers, by conversation id; run_start refuses a busy one. */
  busy: Record<string, ConversationBusy | null> = {};
  /** Where the page hears of drags over the window, once it asked. */
  dragWatcher: Channel<FileDrag> | null = null;
  /** Where the page hears of macOS's menu bar, once it asked. */
  menuWatcher: Channel<AppMenuAction> | null = null;
  /** The menu bar's words the page gave, in order: the menu speaks the last. */
  readonly menuWords: AppMenuLabels[] = [];
  /** Each conversation's workspace files, by conversation id. */
  workspaceFiles: Record<string, WorkspaceFileView[]> = {};
  /** Added files the next message names, by conversation: the runtime clears them once a run's task names them. */
  pendingAnnouncement: Record<string, string[]> = {};
  /** Whose workspace a conversation's is, where it is another's (a subagent's). */
  workspaceOwners: Record<string, { conversationId: string; title: string }> = {};
  /** Conversations deleted on their own (a subagent's): reading them is `not_found`. */
  goneConversations: string[] = [];
  /** Set when no file manager can open a folder: `workspace_open` answers with its path. */
  noFileManager = false;
  /** What workspace_preview answers, by path. */
  previews: Record<string, FilePreview> = {};
  /** The Docker engine Settings chose. */
  engine: { host: string | null; certPath: string | null; fromEnvironment: string | null } = { host: null, certPath: null, fromEnvironment: null };
  /** The database Settings chose, as database_get answers (a local file at first). */
  database: DatabaseView = {
    savedUrl: null,
    fromEnvironment: null,
    open: "/home/a/.local/share/decima/decima.db",
    shared: false,
    passwordInKeyring: false,
    passwordFile: null,
    restartNeeded: false,
    openError: null,
  };
  /** Where the page hears of other desktops' writes, once it asked (a shared store only). */
  changeWatcher: Channel<StoreChange> | null = null;
  /** The folder the certificates dialog picks; null: cancelled. */
  certsPicked: string | null = "/home/a/team-certs";
  /** Where the save dialog of "save as" puts a file; null: cancelled. */
  saveAsTo: string | null = "/home/a/Documents/copy";
  /** The channels runs were started with, newest last. */
  readonly channels: Channel<RunUpdate>[] = [];
  /** The conversation of each run started, by run id. */
  private runConversations = new Map<string, string>();
  private failures = new Map<string, AppError>();
  private pending = new Map<string, Promise<void>>();
  private nextId = 1;
  private clock = Date.parse("2026-03-01T12:00:00Z");

  constructor(
    init: { conversations?: ConversationSummary[]; messages?: Record<string, MessageView[]>; providers?: FakeBackend["providers"] } = {},
  ) {
    this.conversations = [...(init.conversations ?? [])];
    this.messages = { ...(init.messages ?? {}) };
    this.providers = [...(init.providers ?? [])];
  }

  install(): this {
    // Real IPC serialises every answer, so the webview never shares an object with the backend:
    // answer with a copy, or a list changed here in place would look unchanged to React.
    const copy = (value: unknown) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
    mockIPC(async (cmd, payload) => copy(await this.handle(cmd, (payload ?? {}) as Record<string, unknown>)));
    return this;
  }

  /** Stores an imported conversation, as conversation_import does. */
  private imported(title: string, messages: MessageView[]): ConversationSummary {
    const at = this.now();
    const created: ConversationSummary = {
      id: `imported-${this.nextId++}`,
      title,
      messageCount: messages.length,
      tokens: messages.reduce((n, m) => n + m.tokens, 0),
      createdAt: at,
      updatedAt: at,
      parentId: null,
    };
    this.conversations.unshift(created);
    this.messages[created.id] = messages;
    return created;
  }

  private providerView(p: FakeBackend["providers"][number]) {
    return {
      thresholds: { warn: 0.7, compress: 0.85, deep: 0.9, enabled: true },
      keyFile: null,
      prices: null,
      cacheTtl: "5m",
      kind: "openai",
      contextWindowSource: "configured",
      servedWindow: null,
      structuredOutput: null,
      ...p,
      preset: null,
    };
  }

  /** Every later call of `cmd` rejects with `error` until `succeed(cmd)`. */
  fail(cmd: string, error: AppError): void {
    this.failures.set(cmd, error);
  }

  succeed(cmd: string): void {
    this.failures.delete(cmd);
  }

  /** Holds the next call of `cmd` until the returned function is called. */
  hold(cmd: string): () => void {
    let release!: () => void;
    this.pending.set(cmd, new Promise<void>((resolve) => (release = resolve)));
    return () => release();
  }

  /** Tells the page of a drag over the window through its watch channel, as the window would. */
  drag(drag: FileDrag): void {
    if (!this.dragWatcher) throw new Error("the page does not watch drags");
    this.dragWatcher.onmessage(drag);
  }

  /** Tells the page of a choice in macOS's menu bar, as the app would. */
  chooseInMenu(action: AppMenuAction): void {
    if (!this.menuWatcher) throw new Error("the page does not watch the menu bar");
    this.menuWatcher.onmessage(action);
  }

  /** Delivers a run event through the newest run's channel, as the Rust side would. */
  emit(event: RunEvent, sentAtMs = Date.now()): void {
    this.send({ kind: "event", event, sentAtMs });
  }

  /** Ends the newest run, as the Rust side does with its channel's last message. */
  end(ended: RunEnded): void {
    this.send({ kind: "ended", ...ended });
  }

  private send(update: RunUpdate): void {
    const channel = this.channels[this.channels.length - 1];
    if (!channel) throw new Error("no run was started");
    channel.onmessage(update);
  }

  callsOf(cmd: string): Call[] {
    return this.calls.filter((c) => c.cmd === cmd);
  }

  private now(): string {
    this.clock += 1000;
    return new Date(this.clock).toISOString();
  }

  private async handle(cmd: string, args: Record<string, unknown>): Promise<unknown> {
    this.calls.push({ cmd, args });
    const wait = this.pending.get(cmd);
    if (wait) {
      this.pending.delete(cmd);
      await wait;
    }
    const failure = this.failures.get(cmd);
    // Tauri rejects invoke() with the serialized error value (not an Error).
    if (failure) throw failure;

    switch (cmd) {
      case "conversation_list":
        return [...this.conversations];
      case "conversation_import": {
        const picked = this.picked;
        if (picked === null) return null;
        if ("code" in picked) throw picked;
        return this.imported(picked.title, picked.messages);
      }
      case "file_drags_watch":
        this.dragWatcher = args.onDrag as Channel<FileDrag>;
        return null;
      case "app_menu_watch":
        this.menuWatcher = args.onAction as Channel<AppMenuAction>;
        this.menuWords.push(args.labels as AppMenuLabels);
        return null;
      case "conversation_import_dropped":
        return (args.paths as string[]).map((path) => {
          const name = path.split("/").pop() ?? path;
          const file = this.droppable[path];
          if (file === undefined) return { name, conversation: null, error: "only a file dropped on this window can be imported from it" };
          if (typeof file === "string") return { name, conversation: null, error: file };
          return { name, conversation: this.imported(file.title, file.messages), error: null };
        });
      case "run_options_get":
      case "run_options_save": {
        const id = String(args.conversationId);
        if (cmd === "run_options_save") {
          const provider = typeof args.provider === "string" && args.provider.trim() !== "" ? args.provider : null;
          if (provider !== null && !this.providers.some((p) => p.name === provider))
            throw { code: "invalid_input", message: `the provider '${provider}' chosen for this conversation is not configured` } satisfies AppError;
          const maxSteps = args.maxSteps === null ? null : Number(args.maxSteps);
          if (maxSteps !== null && (maxSteps < 1 || maxSteps > 1000))
            throw { code: "invalid_input", message: `a run may make between 1 and 1000 model calls, not ${maxSteps}` } satisfies AppError;
          this.runOptions[id] = { provider, sandbox: (args.sandbox as string | null) ?? null, maxSteps, tenthMan: (args.tenthMan as string | null) ?? null };
        }
        const own = this.runOptions[id] ?? { provider: null, sandbox: null, maxSteps: null, tenthMan: null };
        const inForce = own.provider ?? this.settings.provider ?? (this.providers.length === 1 ? this.providers[0]!.name : null);
        const providerTenthMan = inForce === null ? null : (this.providerTenthMan[inForce] ?? null);
        return {
          ...own,
          quick: this.quick[id] ?? false,
          providerInForce: inForce,
          providerTenthMan,
          workspace: this.workspaces[id] ?? null,
          defaultWorkspace: `/data/workspaces/${id}`,
          settingsProvider: this.settings.provider,
          settingsSandbox: this.settings.sandbox,
          defaultMaxSteps: 50,
          defaultTenthMan: providerTenthMan ?? "hybrid",
        };
      }
      case "run_options_set_quick":
        this.quick[String(args.conversationId)] = Boolean(args.quick);
        return this.handle("run_options_get", { conversationId: args.conversationId });
      case "provider_tenth_man_save":
        this.providerTenthMan[String(args.name)] = (args.mode as string | null) ?? null;
        return null;
      case "workspace_census":
        return this.census[`${String(args.conversationId)}/${String(args.sandbox)}`] ?? { files: 0, bytes: 0 };
      case "workspace_copy_across":
        if ("code" in this.copyAcross) throw this.copyAcross;
        delete this.leftOnHost[String(args.conversationId)];
        return this.copyAcross;
      case "plan_rollback_preview":
        if (this.rollbackPreview !== null && typeof this.rollbackPreview === "object" && "code" in this.rollbackPreview) throw this.rollbackPreview;
        return this.rollbackPreview;
      case "plan_rollback":
        return { undo: 41, filesRestored: 1, filesRemoved: 1, messagesRemoved: 6, workspaceError: null };
      case "plan_rollback_undo":
        return 6;
      case "conversation_export_report":
        if (this.report !== null && "code" in this.report) throw this.report;
        return this.report;
      case "table_save_csv":
        return this.csvSaveTo === null ? null : { path: this.csvSaveTo, bytes: String(args.csv).length };
      case "conversation_title_from_model": {
        if (this.modelTitle === null) return null;
        const c = this.conversations.find((x) => x.id === args.conversationId);
        if (!c || c.title !== args.expectedTitle) return null;
        c.title = this.modelTitle;
        return this.modelTitle;
      }
      case "workspace_choose":
        if (this.pickedFolder === null) return null;
        this.workspaces[String(args.conversationId)] = this.pickedFolder;
        return this.handle("run_options_get", { conversationId: args.conversationId });
      case "workspace_use_default":
        delete this.workspaces[String(args.conversationId)];
        return this.handle("run_options_get", { conversationId: args.conversationId });
      case "workspace_open":
        return this.noFileManager ? `/home/analyst/.local/share/decima/workspaces/${String(args.conversationId)}` : null;
      case "conversation_create": {
        const at = this.now();
        const created: ConversationSummary = {
          id: `new-${this.nextId++}`,
          title: String(args.title),
          messageCount: 0,
          tokens: 0,
          createdAt: at,
          updatedAt: at,
          parentId: null,
        };
        this.conversations.unshift(created);
        return created;
      }
      case "conversation_rename": {
        const found = this.find(String(args.id));
        found.title = String(args.title);
        return { ...found };
      }
      case "conversation_delete": {
        const found = this.find(String(args.id));
        this.conversations = this.conversations.filter((c) => c !== found);
        this.deleted.push(found);
        return null;
      }
      case "conversation_restore": {
        const found = this.deleted.find((c) => c.id === args.id);
        if (!found) throw notFound(String(args.id));
        this.deleted = this.deleted.filter((c) => c !== found);
        this.conversations.push(found);
        return { ...found };
      }
      case "message_set_pinned": {
        const list = this.messages[String(args.conversationId)] ?? [];
        const at = list.findIndex((m) => m.seq === Number(args.seq));
        if (at < 0) throw { code: "not_found", message: `message seq ${String(args.seq)} not found` } satisfies AppError;
        list[at] = { ...list[at]!, pinned: Boolean(args.pinned) };
        return null;
      }
      case "message_page": {
        if (this.goneConversations.includes(String(args.conversationId)))
          throw { code: "not_found", message: `conversation ${String(args.conversationId)} not found` } satisfies AppError;
        this.pageReads.push(args.at as PageAt);
        return pageOf(this.messages[String(args.conversationId)] ?? [], args.at as PageAt, Number(args.limit));
      }
      case "search_messages": {
        if (this.searchFailure) throw this.searchFailure;
        const words = String(args.text).toLowerCase().split(/\s+/).filter((w) => w !== "");
        const scope = args.conversationId === null ? null : String(args.conversationId);
        const hits: SearchHitView[] = [];
        for (const c of this.conversations) {
          if (scope !== null && c.id !== scope) continue;
          for (const m of this.messages[c.id] ?? []) {
            const lower = m.content.toLowerCase();
            if (!words.every((w) => lower.includes(w))) continue;
            const at = lower.indexOf(words[0] ?? "");
            hits.push({
              conversationId: c.id,
              conversationTitle: c.title,
              seq: m.seq,
              role: m.role,
              createdAt: m.createdAt,
              snippet: {
                before: m.content.slice(0, at),
                matched: m.content.slice(at, at + (words[0]?.length ?? 0)),
                after: m.content.slice(at + (words[0]?.length ?? 0)),
              },
            });
          }
        }
        hits.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.seq - a.seq);
        const from = args.after === null ? 0 : Number(args.after);
        const limit = Number(args.limit);
        const page = hits.slice(from, from + limit);
        return { hits: page, next: from + limit < hits.length ? String(from + limit) : null };
      }
      case "find_in_conversation": {
        const words = String(args.text).toLowerCase().split(/\s+/).filter((w) => w !== "");
        const seqs = (this.messages[String(args.conversationId)] ?? [])
          .filter((m) => words.every((w) => m.content.toLowerCase().includes(w)))
          .map((m) => m.seq);
        return { seqs, truncated: false };
      }
      case "context_usage":
        if (this.providers.length === 0 && this.noProviderForUsage)
          throw { code: "no_provider", message: "No model provider yet: add one in Settings." } satisfies AppError;
        if (!this.usage) throw notFound(String(args.conversationId));
        return this.usage;
      case "execution_list":
        return this.executions[String(args.conversationId)] ?? [];
      case "execution_interrupted":
        return this.interrupted;
      case "conversation_busy":
        return this.busy[String(args.id)] ?? null;
      case "run_start":
      case "execution_recover":
      case "execution_resume": {
        const conversationId =
          cmd === "run_start" ? String(args.conversationId) : this.executionById(String(args.executionId))?.conversationId;
        const busy = conversationId === undefined ? null : this.busy[conversationId];
        if (cmd === "run_start" && busy) throw { code: "busy", message: busy.message } satisfies AppError;
        if (cmd === "run_start" && args.rewindFrom !== null && args.rewindFrom !== undefined && conversationId !== undefined) {
          // The runtime's rule: only the last user message can be the point to run again from.
          const live = this.messages[conversationId] ?? [];
          const lastUser = [...live].reverse().find((m) => m.role === "user");
          if (lastUser?.seq !== Number(args.rewindFrom))
            throw { code: "invalid_input", message: "only the last message you sent can be edited or run again" } satisfies AppError;
          this.messages[conversationId] = live.filter((m) => m.seq < Number(args.rewindFrom));
        }
        if (cmd === "execution_recover") this.checkChoice(this.executionById(String(args.executionId)), String(args.choice));
        // The run's task names the added files.
        if (cmd === "run_start" && conversationId !== undefined) delete this.pendingAnnouncement[conversationId];
        this.channels.push(args.onEvent as Channel<RunUpdate>);
        const runId = `run-${this.nextId++}`;
        if (conversationId !== undefined) this.runConversations.set(runId, conversationId);
        return runId;
      }
      case "run_approve":
        return null;
      case "run_choose": {
        const conversationId = this.runConversations.get(String(args.runId));
        const waiting = (this.executions[conversationId ?? ""] ?? []).find((e) => this.waitsOn(e));
        this.checkChoice(waiting, String(args.choice));
        return null;
      }
      case "run_stop":
        return null;
      case "run_skip_review":
        return this.reviewSkippable;
      case "provider_names":
        return this.providers.map((p) => ({ name: p.name, model: p.model }));
      case "mcp_server_list":
        return this.mcpServers;
      case "app_about":
        return { version: "0.2.0", commit: "a6e16a4", built: "2026-11-27" };
      case "app_painted":
        this.painted.push({ firstPaint: args.firstPaint as number | null, firstFrame: args.firstFrame as number });
        return null;
      case "database_get":
        return this.database;
      case "database_save": {
        // As the store does: only a postgres:// URL, a server that answers, and the password
        // moved out of the URL into the keyring.
        const url = String(args.url).trim();
        if (!/^postgres(ql)?:\/\//i.test(url)) {
          throw {
            code: "invalid_input",
            message: "a shared database is a postgres:// URL, such as postgres://analyst@db.example.org:5432/decima?sslmode=verify-full",
          } satisfies AppError;
        }
        if (url.includes("unreachable")) {
          throw { code: "invalid_input", message: "cannot reach the database at postgres://unreachable/decima: connection refused" } satisfies AppError;
        }
        const bare = url.replace(/^(postgres(?:ql)?:\/\/[^:@/]+):[^@/]*@/i, "$1@");
        const withPassword = String(args.password) !== "" || bare !== url;
        this.database = {
          ...this.database,
          savedUrl: bare,
          passwordInKeyring: withPassword || this.database.passwordInKeyring,
          restartNeeded: bare !== this.database.open,
        };
        return this.database;
      }
      case "database_forget":
        this.database = { ...this.database, savedUrl: null, passwordInKeyring: false, passwordFile: null, restartNeeded: this.database.shared };
        return this.database;
      case "store_changes_watch":
        if (!this.database.shared) return false;
        this.changeWatcher = args.onChange as Channel<StoreChange>;
        return true;
      case "sandbox_engine_get":
        return this.engine;
      case "sandbox_engine_save": {
        const host = String(args.host).trim() || null;
        let certPath = this.engine.certPath;
        if (args.chooseCerts) {
          if (this.certsPicked === null) return this.engine;
          certPath = this.certsPicked;
        }
        const ssh = host !== null && host.startsWith("ssh://");
        if (host !== null && !host.startsWith("tcp://") && !ssh) {
          throw {
            code: "invalid_input",
            message: `DOCKER_HOST=${host} is neither a unix:// socket, a tcp:// engine with TLS nor an ssh:// host`,
          } satisfies AppError;
        }
        if (ssh) {
          this.engine = { host, certPath: null, fromEnvironment: this.engine.fromEnvironment };
          return this.engine;
        }
        if (host !== null && certPath === null) {
          throw { code: "invalid_input", message: `${host} is reached over mutual TLS: choose the folder that holds ca.pem, cert.pem and key.pem` } satisfies AppError;
        }
        this.engine = { host, certPath: host === null ? null : certPath, fromEnvironment: this.engine.fromEnvironment };
        return this.engine;
      }
      case "workspace_files": {
        const sandbox = this.runOptions[String(args.conversationId)]?.sandbox ?? this.settings.sandbox;
        return {
          sandbox,
          canOpenFolder: sandbox === "host",
          location: sandbox === "host" ? (this.workspaces[String(args.conversationId)] ?? `/data/workspaces/${String(args.conversationId)}`) : null,
          leftOnHost: sandbox === "docker" ? (this.leftOnHost[String(args.conversationId)] ?? 0) : 0,
          files: this.workspaceFiles[String(args.conversationId)] ?? [],
          pendingAnnouncement: this.pendingAnnouncement[String(args.conversationId)] ?? [],
          owner: this.workspaceOwners[String(args.conversationId)] ?? null,
        };
      }
      case "workspace_preview": {
        const preview = this.previews[String(args.path)];
        if (!preview) throw { code: "invalid_input", message: `${String(args.path)} is not in this conversation's workspace (any more)` } satisfies AppError;
        return preview;
      }
      case "workspace_save_as":
        return this.saveAsTo === null ? null : { path: this.saveAsTo, bytes: 2048 };
      case "workspace_add_dropped": {
        const id = String(args.conversationId);
        const paths = (args.paths as string[]).map((p) => p.split("/").pop() ?? p);
        const files = (this.workspaceFiles[id] ??= []);
        for (const path of paths) {
          files.unshift({ path, size: 1200, modifiedMs: this.clock, writtenBy: { by: "analyst", name: path, atMs: this.clock } });
        }
        (this.pendingAnnouncement[id] ??= []).push(...paths);
        return paths.map((path) => ({ path, size: 1200 }));
      }
      case "tool_result_seq": {
        // As the store answers: after the answer that holds the call, the first result of that
        // id (none when that answer is gone); without it, the newest.
        const live = this.messages[String(args.conversationId)] ?? [];
        const after = args.afterSeq as number | null | undefined;
        if (after !== null && after !== undefined) {
          if (!live.some((m) => m.seq === after)) return null;
          return live.find((m) => m.seq > after && m.toolCallId === args.callId)?.seq ?? null;
        }
        return [...live].reverse().find((m) => m.toolCallId === args.callId)?.seq ?? null;
      }
      case "workspace_add_picked":
        return [];
      case "tool_result_images":
        return this.toolImages[`${String(args.conversationId)}/${String(args.callId)}`] ?? [];
      case "mcp_conversation_list":
        return this.mcpServers.map((m) => ({ name: m.name, enabled: m.enabled, onHere: !(this.mcpOff[String(args.conversationId)] ?? []).includes(m.name) }));
      case "mcp_conversation_set": {
        const off = (this.mcpOff[String(args.conversationId)] ??= []);
        const name = String(args.name);
        this.mcpOff[String(args.conversationId)] = args.on ? off.filter((n) => n !== name) : [...off.filter((n) => n !== name), name];
        return null;
      }
      case "mcp_server_add": {
        const name = String(args.name);
        if (this.mcpServers.some((m) => m.name === name)) {
          throw { code: "conflict", message: `an MCP server named "${name}" exists already; remove it first or pick another name` };
        }
        const url = args.url as string | null;
        const view: McpServerView = {
          name,
          kind: url ? "http" : "stdio",
          place: url ? null : String(args.place),
          summary: url ?? String(args.command),
          enabled: true,
          secretNames: [],
          status: null,
          allow: [],
          deny: [],
        };
        this.mcpServers.push(view);
        return view;
      }
      case "mcp_server_import":
        return [];
      case "mcp_server_set_enabled":
        this.mcpServers = this.mcpServers.map((m) => (m.name === args.name ? { ...m, enabled: Boolean(args.enabled) } : m));
        return null;
      case "mcp_server_remove":
        this.mcpServers = this.mcpServers.filter((m) => m.name !== args.name);
        return null;
      case "mcp_server_set_place": {
        const name = String(args.name);
        this.mcpServers = this.mcpServers.map((m) => (m.name === name ? { ...m, place: String(args.place) } : m));
        return null;
      }
      case "mcp_server_check": {
        // As the runtime does: the check records the server's state, which the list reads.
        const name = String(args.name);
        const found = this.mcpChecks[name];
        const at = { atMs: Date.UTC(2026, 10, 27, 9, 30), tools: null, tokens: null, startedMs: null, error: null, stderr: [] };
        const record = (status: McpServerView["status"]) => {
          this.mcpServers = this.mcpServers.map((m) => (m.name === name ? { ...m, status } : m));
        };
        if (typeof found === "string") {
          record({ ...at, state: "failed", error: found, stderr: this.mcpStderr[name] ?? [] });
          // A server that fails its check is turned off for runs.
          this.mcpServers = this.mcpServers.map((m) => (m.name === name ? { ...m, enabled: false } : m));
          throw { code: "storage", message: found };
        }
        const view = found ?? { tools: [], tokens: 0, startedMs: 1 };
        record({ ...at, state: "ready", tools: view.tools.length, tokens: view.tokens, startedMs: view.startedMs });
        return view;
      }
      case "provider_list":
        return this.providers.map((p) => this.providerView(p));
      case "settings_get":
        return this.settings;
      case "settings_save": {
        // The runtime's rules: blank is no choice; a name must be a configured provider.
        const name = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v.trim() : null);
        const next: WorkbenchSettings = {
          provider: name(args.provider),
          reviewerProvider: name(args.reviewerProvider),
          sandbox: String(args.sandbox),
        };
        for (const chosen of [next.provider, next.reviewerProvider]) {
          if (chosen !== null && !this.providers.some((p) => p.name === chosen))
            throw { code: "invalid_input", message: `the provider '${chosen}' is not configured; choose another in Settings` } satisfies AppError;
        }
        if (next.sandbox !== "host" && next.sandbox !== "docker")
          throw { code: "invalid_input", message: `"${next.sandbox}" is not a sandbox kind (host or docker)` } satisfies AppError;
        this.settings = next;
        return next;
      }
      case "provider_thresholds_save": {
        const t = args.thresholds as ThresholdsView;
        const provider = this.providers.find((p) => p.name === args.name);
        if (!provider) throw { code: "not_found", message: `no provider ${String(args.name)}` } satisfies AppError;
        const [warn, compress, deep] = [Number(t.warn), Number(t.compress), Number(t.deep)];
        if (!(warn > 0 && warn <= compress && compress <= deep && deep <= 1))
          throw { code: "invalid_input", message: "thresholds must be positive and increasing" } satisfies AppError;
        provider.thresholds = t;
        return this.providerView(provider);
      }
      case "provider_add": {
        const added = {
          name: String(args.name),
          model: String(args.model ?? "m"),
          baseUrl: String(args.baseUrl ?? "http://x"),
          contextWindow: Number(args.contextWindow ?? 128000),
          hasApiKey: args.apiKey !== null && args.apiKey !== undefined,
          keyFile: this.keyFile && args.apiKey ? this.keyFile : null,
        };
        this.providers.push(added);
        return this.providerView(added);
      }
      case "provider_presets":
        return [
          { name: "ollama", label: "Ollama (local)", kind: "ollama", baseUrl: "http://localhost:11434/v1", defaultModel: "qwen3:8b", contextWindow: 32768, needsApiKey: false },
          { name: "anthropic", label: "Anthropic", kind: "anthropic", baseUrl: "https://api.anthropic.com", defaultModel: "claude-sonnet-4-5", contextWindow: 200000, needsApiKey: true },
        ];
      case "provider_models":
        if (this.modelList === null)
          return { models: [], failure: { kind: "unreachable", url: String(args.baseUrl), status: null, detail: "connection refused" } };
        return { models: this.modelList, failure: null };
      case "provider_test": {
        const none = { contextWindow: null, contextWindowSource: null, windowWarning: null, structuredOutput: null };
        if (this.probeFailure) return { elapsedMs: 3, promptTokens: null, ...none, failure: this.probeFailure };
        // As the runtime does: the test stores the window it read, with where it comes from.
        const tested = this.providers.find((p) => p.name === args.name);
        const { contextWindow, contextWindowSource, structuredOutput } = this.probeFacts;
        if (tested && contextWindow !== null && contextWindowSource !== null) {
          tested.contextWindow = contextWindow;
          tested.contextWindowSource = contextWindowSource;
        }
        if (tested && structuredOutput !== null) tested.structuredOutput = structuredOutput;
        return { elapsedMs: 42, promptTokens: 12, ...this.probeFacts, failure: null };
      }
      case "provider_update": {
        const found = this.providers.find((p) => p.name === args.name);
        if (!found) throw notFound(String(args.name));
        if (!/^https?:\/\/./.test(String(args.baseUrl)))
          throw { code: "invalid_input", message: "invalid base URL: it must start with http:// or https://" } satisfies AppError;
        found.baseUrl = String(args.baseUrl);
        found.model = String(args.model);
        // Another window is the analyst's own now.
        if (Number(args.contextWindow) !== found.contextWindow) found.contextWindowSource = "configured";
        found.contextWindow = Number(args.contextWindow);
        if (args.apiKey) found.hasApiKey = true;
        return this.providerView(found);
      }
      case "provider_pricing_save": {
        const found = this.providers.find((p) => p.name === args.name);
        if (!found) throw notFound(String(args.name));
        found.prices = (args.prices as PricesView | null) ?? null;
        found.cacheTtl = String(args.cacheTtl);
        return this.providerView(found);
      }
      case "provider_remove":
        this.providers = this.providers.filter((p) => p.name !== args.name);
        return null;
      case "sandbox_status":
        return this.sandbox;
      case "sandbox_image_build": {
        const channel = args.onProgress as Channel<ImageBuildEvent>;
        for (const event of this.imageBuild) channel.onmessage(event);
        if (this.imageBuildGate) await this.imageBuildGate;
        if (this.imageBuildFailure) throw this.imageBuildFailure;
        const image = { name: "decima-sandbox:latest", present: true, current: true, sizeMb: 1374, created: "2026-11-27T01:39:12Z", buildingElsewhere: false };
        this.sandbox = { ...this.sandbox, image };
        return image;
      }
      case "preset_list":
        return this.presets;
      case "preset_import": {
        const bytes = args.bytes as number[];
        if (bytes.length === 0) throw { code: "invalid_input", message: "the file is empty" } satisfies AppError;
        const preset = { id: `p${this.nextId++}`, name: "Seraphina", kind: "st_card", source: String(args.fileName), createdAt: this.now() };
        this.presets.push(preset);
        return preset;
      }
      case "conversation_export":
        // What the save dialog answers: a path, or null when the analyst cancelled it.
        if (this.exportCancelled) return null;
        return { path: `/home/ana/Documents/${String(args.conversationId)} ${String(args.today)}.${args.format === "text" ? "txt" : String(args.format)}`, messages: 2 };
      case "export_open":
      case "export_reveal":
        return null;
      case "compaction_list":
        return this.compactions[String(args.conversationId)] ?? [];
      case "compression_preview":
      case "compression_apply": {
        const id = cmd === "compression_apply" ? `k${this.nextId++}` : null;
        const preview: CompressionPreview = {
          compactionId: id,
          // The command's own arguments: the UI sends the names it offers.
          level: args.level as CompressionLevel,
          strategy: args.strategy as Strategy,
          tokensBefore: 9000,
          tokensAfter: 3000,
          summaries: [{ level: "segment", startSeq: 1, endSeq: 1, tokens: 40, text: "Goal: count the invoices." }],
          keptVerbatim: [2],
          empty: false,
        };
        if (id) {
          const list = (this.compactions[String(args.conversationId)] ??= []);
          list.forEach((m) => (m.undoable = false));
          list.push({
            id,
            level: preview.level,
            trigger: "manual",
            strategy: preview.strategy,
            tokensBefore: 9000,
            tokensAfter: 3000,
            startSeq: 1,
            endSeq: 1,
            undoable: true,
            createdAt: this.now(),
          });
        }
        return preview;
      }
      case "compression_undo":
        for (const list of Object.values(this.compactions)) {
          const i = list.findIndex((m) => m.id === args.compactionId);
          if (i >= 0) list.splice(i, 1);
        }
        return null;
      case "review_run":
        if (!this.review) throw { code: "provider", message: "no reviewer answered" } satisfies AppError;
        this.latestReview = this.review;
        return this.review;
      case "message_figures":
        return { messageSeq: Number(args.seq), figures: this.figures[String(args.conversationId)]?.[Number(args.seq)] ?? [] };
      case "review_latest":
        if (typeof args.executionId === "string") return this.runReviews[args.executionId] ?? null;
        return this.latestReview;
      default:
        throw { code: "internal", message: `unknown command ${cmd}` } satisfies AppError;
    }
  }

  private executionById(id: string): ExecutionView | undefined {
    return Object.values(this.executions)
      .flat()
      .find((e) => e.id === id);
  }

  private waitsOn(e: ExecutionView): boolean {
    return e.status === "awaiting_user" && e.waitingOn !== null && e.waitingOn.resolution === null;
  }

  /** As the runtime does: a choice the waited-on failure does not offer is refused, nothing changes. */
  private checkChoice(execution: ExecutionView | undefined, choice: string): void {
    const failure = execution && this.waitsOn(execution) ? execution.waitingOn : null;
    if (!failure || (failure.suggestions as string[]).includes(choice)) return;
    throw {
      code: "invalid_input",
      message: `${choice} is not a choice for failure ${failure.id} of execution ${execution?.id}: it offers ${failure.suggestions.join(", ")}; nothing was changed`,
    } satisfies AppError;
  }

  private find(id: string): ConversationSummary {
    const found = this.conversations.find((c) => c.id === id);
    if (!found) throw notFound(id);
    return found;
  }
}

function notFound(id: string): AppError {
  return { code: "not_found", message: `conversation ${id} not found` };
}

/** A context usage at `fraction` of a 10,000-token room. */
export function usageAt(fraction: number): ContextUsage {
  const inputRoom = 10_000;
  const percent = fraction * 100;
  return {
    window: 12_000,
    outputReserve: 2_000,
    inputRoom,
    tokens: Math.round(fraction * inputRoom),
    usage: fraction,
    state: percent >= 90 ? "deep" : percent >= 85 ? "compress" : percent >= 70 ? "warn" : "ok",
    layers: [
      { name: "system_constants", tokens: 500 },
      { name: "working_context", tokens: Math.round(fraction * inputRoom) - 500 },
    ],
    pendingMessages: 0,
    cachedPercent: null,
    costUsd: null,
    chatCostUsd: null,
  };
}
