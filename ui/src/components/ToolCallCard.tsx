import { lazy, Suspense, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import type { ToolCallView } from "../bindings";
import { callCode, fenced } from "../lib/callCode";
import { prettyJson } from "../lib/format";
import { toolLine } from "../lib/toolLine";
import { toolLabel } from "../lib/toolName";

const MarkdownText = lazy(() => import("./MarkdownText"));

/**
 * A tool call as one readable line (`shell: duckdb -c 'select …'`), its arguments folded under
 * it and opened on demand: the command, code or file content as a highlighted code block with
 * real line breaks (what an analyst audits), the other arguments as JSON. The call's id is the
 * provider's bookkeeping: in the tooltip only. The call's result, when it is loaded, is the
 * card's second part (`children`): a call and what it returned read as one thing.
 */
export function ToolCallCard({ call, children }: { call: ToolCallView; children?: ReactNode }) {
  const { t } = useTranslation();
  const args = prettyJson(call.arguments);
  const split = callCode(call.arguments);
  const line = toolLine(call.name, call.arguments, (total, inProgress) => t("message.todoLine", { count: total, inProgress }));
  return (
    <div className="tool-card" data-testid="tool-card" data-tool-call-id={call.id}>
      <details className="tool-call" data-testid="tool-call" data-tool-call-id={call.id}>
        <summary className="tool-call-head" title={call.id}>
          <span className="tool-call-name" data-testid="tool-call-name" data-tool={call.name}>
            {toolLabel(call.name).label}
          </span>
          {line.detail !== "" && (
            <span className="tool-call-line" data-testid="tool-call-line">
              {line.detail}
            </span>
          )}
          {!args.ok && <span className="tool-call-warning">{t("message.invalidJson")}</span>}
        </summary>
        {split && split.code.length > 0 ? (
          <div className="tool-call-code" data-testid="tool-call-arguments" data-valid-json>
            {split.code.map((arg) => (
              <div key={arg.name} className="tool-call-code-arg" data-testid="tool-call-code" data-argument={arg.name} data-language={arg.language}>
                <span className="tool-call-code-name">{arg.name}</span>
                <div className="markdown message-content">
                  <Suspense fallback={<pre>{arg.code}</pre>}>
                    <MarkdownText text={fenced(arg.language, arg.code)} />
                  </Suspense>
                </div>
              </div>
            ))}
            {split.rest && <pre className="tool-call-args">{split.rest}</pre>}
          </div>
        ) : (
          <pre className="tool-call-args" data-testid="tool-call-arguments" data-valid-json={args.ok}>
            {args.text}
          </pre>
        )}
      </details>
      {children}
    </div>
  );
}
