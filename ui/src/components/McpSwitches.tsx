import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type McpSwitchView } from "../bindings";
import { InlineError } from "./InlineError";

/**
 * The MCP servers as this conversation's runs use them: one switch each, saved on change. A
 * server turned off in the settings says so; its switch here waits for it.
 */
export function McpSwitches({ conversationId, disabled }: { conversationId: string; disabled: boolean }) {
  const { t } = useTranslation();
  const [switches, setSwitches] = useState<McpSwitchView[]>([]);
  const [error, setError] = useState<AppError | null>(null);

  useEffect(() => {
    let alive = true;
    void (async () => {
      const res = await call(() => commands.mcpConversationList(conversationId));
      if (!alive) return;
      if (res.status === "ok") setSwitches(res.data);
      else setError(res.error);
    })();
    return () => {
      alive = false;
    };
  }, [conversationId]);

  const set = async (name: string, on: boolean) => {
    const res = await call(() => commands.mcpConversationSet(conversationId, name, on));
    setError(res.status === "error" ? res.error : null);
    if (res.status === "ok") setSwitches((all) => all.map((s) => (s.name === name ? { ...s, onHere: on } : s)));
  };

  if (switches.length === 0 && !error) return null;
  return (
    <fieldset className="settings-field mcp-switches" data-testid="mcp-switches">
      <legend>{t("runOptions.mcp")}</legend>
      {switches.map((s) => (
        <label key={s.name} data-testid="mcp-switch" data-name={s.name}>
          <input type="checkbox" checked={s.onHere} disabled={disabled} onChange={(e) => void set(s.name, e.target.checked)} />{" "}
          {s.name}
          {!s.enabled && <span className="muted"> ({t("runOptions.mcpOffForAll")})</span>}
        </label>
      ))}
      <InlineError error={error} testId="mcp-switches-error" />
    </fieldset>
  );
}
