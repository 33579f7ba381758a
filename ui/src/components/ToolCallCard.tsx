import { useTranslation } from "react-i18next";
import type { ToolCallView } from "../bindings";
import { prettyJson } from "../lib/format";

export function ToolCallCard({ call }: { call: ToolCallView }) {
  const { t } = useTranslation();
  const args = prettyJson(call.arguments);
  return (
    <div className="tool-call" data-testid="tool-call" data-tool-call-id={call.id}>
      <div className="tool-call-head">
        {/* The call's id is the provider's bookkeeping: in the tooltip, not the text. */}
        <span className="tool-call-name" data-testid="tool-call-name" title={call.id}>
          {call.name}
        </span>
        {!args.ok && <span className="tool-call-warning">{t("message.invalidJson")}</span>}
      </div>
      <pre className="tool-call-args" data-testid="tool-call-arguments" data-valid-json={args.ok}>
        {args.text}
      </pre>
    </div>
  );
}
