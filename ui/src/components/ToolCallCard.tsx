import { useTranslation } from "react-i18next";
import type { ToolCallView } from "../bindings";
import { prettyJson } from "../lib/format";
import { toolLine } from "../lib/toolLine";

/**
 * A tool call as one readable line (`shell: duckdb -c 'select …'`), the JSON folded under it
 * and opened on demand. The call's id is the provider's bookkeeping: in the tooltip only.
 */
export function ToolCallCard({ call }: { call: ToolCallView }) {
  const { t } = useTranslation();
  const args = prettyJson(call.arguments);
  const line = toolLine(call.name, call.arguments, (total, inProgress) => t("message.todoLine", { count: total, inProgress }));
  return (
    <details className="tool-call" data-testid="tool-call" data-tool-call-id={call.id}>
      <summary className="tool-call-head" title={call.id}>
        <span className="tool-call-name" data-testid="tool-call-name">
          {call.name}
        </span>
        {line.detail !== "" && (
          <span className="tool-call-line" data-testid="tool-call-line">
            {line.detail}
          </span>
        )}
        {!args.ok && <span className="tool-call-warning">{t("message.invalidJson")}</span>}
      </summary>
      <pre className="tool-call-args" data-testid="tool-call-arguments" data-valid-json={args.ok}>
        {args.text}
      </pre>
    </details>
  );
}
