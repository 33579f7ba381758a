import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { copyText } from "../lib/clipboard";

/** How long "Copied" shows before the button reads "Copy" again. */
const COPIED_MS = 1500;

/** A small button that copies `text` and says so. */
export function CopyButton({ text, testId, label }: { text: () => string; testId: string; label?: string }) {
  const { t } = useTranslation();
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const timer = window.setTimeout(() => setState("idle"), COPIED_MS);
    return () => window.clearTimeout(timer);
  }, [state]);
  return (
    <button
      type="button"
      className="link-button copy-button"
      data-testid={testId}
      data-state={state}
      aria-label={label}
      onClick={(e) => {
        e.stopPropagation();
        void copyText(text()).then((ok) => setState(ok ? "copied" : "failed"));
      }}
    >
      {state === "copied" ? t("message.copied") : state === "failed" ? t("message.copyFailed") : t("message.copy")}
    </button>
  );
}
