import { FilePicker } from "./FilePicker";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type McpCheckView, type McpServerView, type McpStatusView } from "../bindings";
import { InlineError } from "./InlineError";

type Place = "docker" | "host";

/** What checking a server found: its tools and their cost, or why it did not start. */
type Checked = { state: "checking" } | { state: "ready"; view: McpCheckView } | { state: "failed"; error: AppError };

/** The form's fields beyond the name, the command or URL and the place. */
type Extra = { variables: string; bearerToken: string; cwd: string; startup: string; call: string; allow: string; deny: string };
const NO_EXTRA: Extra = { variables: "", bearerToken: "", cwd: "", startup: "", call: "", allow: "", deny: "" };

/** A whole number of seconds typed in a field, or nothing when it is blank. */
const seconds = (text: string): number | null => (text.trim() === "" ? null : Math.max(1, Math.round(Number(text))));

/** How the last start of a server went, by a run or a check in any process. */
function LastStart({ status }: { status: McpStatusView | null }) {
  const { t, i18n } = useTranslation();
  if (!status) return <p className="muted" data-testid="mcp-last" data-state="never">{t("mcp.never")}</p>;
  const when = status.atMs === null ? "" : new Date(status.atMs).toLocaleString(i18n.language === "zh" ? "zh-CN" : "en");
  switch (status.state) {
    case "starting":
      return <p data-testid="mcp-last" data-state="starting">{t("mcp.lastStarting")}</p>;
    case "ready":
      return (
        <p data-testid="mcp-last" data-state="ready">
          {t("mcp.lastReady", { when, count: status.tools ?? 0, tokens: status.tokens ?? 0, ms: status.startedMs ?? 0 })}
        </p>
      );
    case "failed":
      return (
        <div className="inline-error" data-testid="mcp-last" data-state="failed">
          <p>{t("mcp.lastFailed", { when, error: status.error ?? "" })}</p>
          {status.stderr.length > 0 && (
            <details open>
              <summary>{t("mcp.stderr")}</summary>
              <pre className="mcp-stderr">{status.stderr.join("\n")}</pre>
            </details>
          )}
        </div>
      );
  }
}

/**
 * The analyst's MCP servers in the settings: each with where it runs, whether runs use it, a
 * check that starts it and lists its tools with what they cost, and remove; a form to add one
 * (a command or a URL) and an import of Claude Desktop's file. Values of variables and headers
 * never reach the window: only their names.
 */
export function McpServers() {
  const { t } = useTranslation();
  const [servers, setServers] = useState<McpServerView[]>([]);
  const [checked, setChecked] = useState<Record<string, Checked>>({});
  const [draft, setDraft] = useState<{ name: string; target: string; place: Place }>({ name: "", target: "", place: "docker" });
  const [extra, setExtra] = useState<Extra>(NO_EXTRA);
  const [importPlace, setImportPlace] = useState<Place>("docker");
  const [error, setError] = useState<AppError | null>(null);
  const [imported, setImported] = useState<string[] | null>(null);

  const load = async () => {
    const res = await call(() => commands.mcpServerList());
    if (res.status === "ok") setServers(res.data);
    else setError(res.error);
  };
  useEffect(() => {
    void load();
  }, []);

  const isUrl = /^https?:\/\//i.test(draft.target.trim());
  const add = async () => {
    const options = {
      variables: extra.variables,
      bearerToken: isUrl && extra.bearerToken.trim() ? extra.bearerToken : null,
      cwd: !isUrl && extra.cwd.trim() ? extra.cwd.trim() : null,
      startupTimeoutSecs: seconds(extra.startup),
      callTimeoutSecs: seconds(extra.call),
      allow: extra.allow,
      deny: extra.deny,
    };
    const res = await call(() =>
      commands.mcpServerAdd(draft.name.trim(), isUrl ? null : draft.target, isUrl ? draft.target : null, draft.place, options),
    );
    setError(res.status === "error" ? res.error : null);
    if (res.status === "ok") {
      setDraft({ name: "", target: "", place: draft.place });
      setExtra(NO_EXTRA);
      await load();
    }
  };

  const importFile = async (file: File) => {
    const bytes = Array.from(new Uint8Array(await file.arrayBuffer()));
    const res = await call(() => commands.mcpServerImport(bytes, importPlace));
    setError(res.status === "error" ? res.error : null);
    setImported(res.status === "ok" ? res.data : null);
    if (res.status === "ok") await load();
  };

  const setEnabled = async (name: string, enabled: boolean) => {
    const res = await call(() => commands.mcpServerSetEnabled(name, enabled));
    setError(res.status === "error" ? res.error : null);
    await load();
  };

  const remove = async (name: string) => {
    const res = await call(() => commands.mcpServerRemove(name));
    setError(res.status === "error" ? res.error : null);
    await load();
  };

  const moveToHost = async (name: string) => {
    const res = await call(() => commands.mcpServerSetPlace(name, "host"));
    setError(res.status === "error" ? res.error : null);
    if (res.status === "ok") await check(name);
  };

  const check = async (name: string) => {
    setChecked((all) => ({ ...all, [name]: { state: "checking" } }));
    const res = await call(() => commands.mcpServerCheck(name));
    setChecked((all) => ({
      ...all,
      [name]: res.status === "ok" ? { state: "ready", view: res.data } : { state: "failed", error: res.error },
    }));
    // The check recorded the server's state for every window: read it back with the list.
    await load();
  };

  return (
    <section aria-label={t("mcp.label")} data-testid="mcp-servers">
      <h3>{t("mcp.label")}</h3>
      <p className="muted">{t("mcp.intro")}</p>
      {servers.length === 0 && <p data-testid="mcp-none">{t("mcp.none")}</p>}
      <ul className="settings-list">
        {servers.map((s) => {
          const c = checked[s.name];
          return (
            <li key={s.name} data-testid="mcp-server" data-name={s.name}>
              <div className="mcp-server-head">
                <strong>{s.name}</strong>{" "}
                <span className="mcp-summary">
                  {s.place ? t(`mcp.place.${s.place as Place}`) : t("mcp.http")} · {s.summary}
                </span>
              </div>
              {s.secretNames.length > 0 && (
                <p className="muted mcp-secrets">{t("mcp.secrets", { names: s.secretNames.join(", ") })}</p>
              )}
              {(s.allow.length > 0 || s.deny.length > 0) && (
                <p className="muted mcp-secrets" data-testid="mcp-lists">
                  {s.allow.length > 0 && t("mcp.onlyOffered", { names: s.allow.join(", ") })}
                  {s.allow.length > 0 && s.deny.length > 0 && " "}
                  {s.deny.length > 0 && t("mcp.neverOffered", { names: s.deny.join(", ") })}
                </p>
              )}
              {s.place === "host" && <p className="approval-hint">{t("mcp.hostWarning")}</p>}
              {s.place === "docker" && <p className="muted">{t("mcp.dockerCheck")}</p>}
              <div className="mcp-actions">
                <label>
                  <input
                    type="checkbox"
                    checked={s.enabled}
                    data-testid="mcp-enabled"
                    onChange={(e) => void setEnabled(s.name, e.target.checked)}
                  />{" "}
                  {t("mcp.enabled")}
                </label>
                <button
                  type="button"
                  className="button button-small"
                  data-testid="mcp-check"
                  disabled={c?.state === "checking"}
                  onClick={() => void check(s.name)}
                >
                  {/* Once checked, the server is started again from scratch: a restart. */}
                  {c === undefined ? t("mcp.check") : t("mcp.restart")}
                </button>
                <button type="button" className="button button-small" data-testid="mcp-remove" onClick={() => void remove(s.name)}>
                  {t("mcp.remove")}
                </button>
              </div>
              {c === undefined && <LastStart status={s.status} />}
              {c?.state === "checking" && <p data-testid="mcp-state">{t("mcp.checking")}</p>}
              {c?.state === "ready" && (
                <div data-testid="mcp-state" data-state="ready">
                  <p>{t("mcp.ready", { count: c.view.tools.length, tokens: c.view.tokens, ms: c.view.startedMs })}</p>
                  <details>
                    <summary>{t("mcp.tools")}</summary>
                    <ul className="mcp-tools">
                      {c.view.tools.map((tool) => (
                        <li key={tool.name}>
                          <code>{tool.name}</code> · {t("mcp.toolTokens", { tokens: tool.tokens })} · {tool.description}
                        </li>
                      ))}
                    </ul>
                  </details>
                </div>
              )}
              {c?.state === "failed" && (
                <div className="inline-error" role="alert" data-testid="mcp-state" data-state="failed">
                  <p>{c.error.message}</p>
                  {/* A failed check turned the server off for runs: said, with the way back. */}
                  {!s.enabled && <p data-testid="mcp-turned-off">{t("mcp.turnedOff")}</p>}
                  {s.place === "docker" && c.error.message.includes("is not in the sandbox image") && (
                    <button type="button" className="button button-small" data-testid="mcp-move-host" onClick={() => void moveToHost(s.name)}>
                      {t("mcp.moveToHost")}
                    </button>
                  )}
                  {s.status?.state === "failed" && s.status.stderr.length > 0 && (
                    <details open>
                      <summary>{t("mcp.stderr")}</summary>
                      <pre className="mcp-stderr">{s.status.stderr.join("\n")}</pre>
                    </details>
                  )}
                </div>
              )}
            </li>
          );
        })}
      </ul>
      <fieldset className="mcp-add">
        <legend>{t("mcp.add")}</legend>
        <label>
          {t("mcp.name")}
          <input value={draft.name} data-testid="mcp-name" onChange={(e) => setDraft({ ...draft, name: e.target.value })} />
        </label>
        <label>
          {t("mcp.target")}
          <input
            value={draft.target}
            data-testid="mcp-target"
            placeholder="node server.js /data"
            onChange={(e) => setDraft({ ...draft, target: e.target.value })}
          />
        </label>
        <label>
          {t("mcp.where")}
          <select value={draft.place} data-testid="mcp-place" onChange={(e) => setDraft({ ...draft, place: e.target.value as Place })}>
            <option value="docker">{t("mcp.place.docker")}</option>
            <option value="host">{t("mcp.place.host")}</option>
          </select>
        </label>
        <details className="mcp-more" data-testid="mcp-more">
          <summary>{t("mcp.more")}</summary>
          <label>
            {t("mcp.variables")}
            <textarea
              rows={3}
              value={extra.variables}
              data-testid="mcp-variables"
              placeholder="DATABASE_URL=…"
              spellCheck={false}
              onChange={(e) => setExtra({ ...extra, variables: e.target.value })}
            />
          </label>
          {isUrl ? (
            <label>
              {t("mcp.bearerToken")}
              <input
                type="password"
                autoComplete="off"
                value={extra.bearerToken}
                data-testid="mcp-bearer"
                onChange={(e) => setExtra({ ...extra, bearerToken: e.target.value })}
              />
            </label>
          ) : (
            <label>
              {t("mcp.cwd")}
              <input value={extra.cwd} data-testid="mcp-cwd" onChange={(e) => setExtra({ ...extra, cwd: e.target.value })} />
            </label>
          )}
          <label>
            {t("mcp.allow")}
            <input value={extra.allow} data-testid="mcp-allow" placeholder="query, list_tables" onChange={(e) => setExtra({ ...extra, allow: e.target.value })} />
          </label>
          <label>
            {t("mcp.deny")}
            <input value={extra.deny} data-testid="mcp-deny" placeholder="drop_table" onChange={(e) => setExtra({ ...extra, deny: e.target.value })} />
          </label>
          <label>
            {t("mcp.startupTimeout")}
            <input
              type="number"
              min={1}
              value={extra.startup}
              data-testid="mcp-startup-timeout"
              onChange={(e) => setExtra({ ...extra, startup: e.target.value })}
            />
          </label>
          <label>
            {t("mcp.callTimeout")}
            <input
              type="number"
              min={1}
              value={extra.call}
              data-testid="mcp-call-timeout"
              onChange={(e) => setExtra({ ...extra, call: e.target.value })}
            />
          </label>
        </details>
        <button
          type="button"
          className="button button-small button-primary"
          data-testid="mcp-add"
          disabled={!draft.name.trim() || !draft.target.trim()}
          onClick={() => void add()}
        >
          {t("mcp.addButton")}
        </button>
      </fieldset>
      <div className="mcp-import">
        <FilePicker label={t("mcp.import")} accept=".json" testId="mcp-import" onFile={(file) => void importFile(file)} />
        <label>
          {t("mcp.importWhere")}{" "}
          <select value={importPlace} data-testid="mcp-import-place" onChange={(e) => setImportPlace(e.target.value as Place)}>
            <option value="docker">{t("mcp.place.docker")}</option>
            <option value="host">{t("mcp.place.host")}</option>
          </select>
        </label>
      </div>
      {imported && <p data-testid="mcp-imported">{t("mcp.imported", { count: imported.length, names: imported.join(", ") })}</p>}
      <InlineError error={error} testId="mcp-error" />
    </section>
  );
}
