import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type ToolImageView } from "../bindings";

/** Whether a tool result's text names images it returned (`[image 1: image/png, …]`). */
export function namesImages(text: string): boolean {
  return /\[image \d+: image\//.test(text);
}

/**
 * The images a tool call's result carries (an MCP server's chart, a screenshot), read from the
 * store when the card is shown. Each opens to its full size on a click, and back.
 */
export function ToolImages({ conversationId, callId, tool }: { conversationId: string; callId: string; tool: string }) {
  const { t } = useTranslation();
  const [images, setImages] = useState<ToolImageView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  useEffect(() => {
    let current = true;
    void call(() => commands.toolResultImages(conversationId, callId)).then((res) => {
      if (!current) return;
      if (res.status === "ok") setImages(res.data);
      else setError(res.error.message);
    });
    return () => {
      current = false;
    };
  }, [conversationId, callId]);
  if (error !== null) {
    return (
      <p className="inline-error" data-testid="tool-images-error" role="alert">
        {t("toolImages.failed", { message: error })}
      </p>
    );
  }
  if (images === null || images.length === 0) return null;
  return (
    <div className="tool-images" data-testid="tool-images">
      {images.map((image, i) => {
        const label = t("toolImages.alt", { n: i + 1, tool });
        return (
          <button
            key={i}
            type="button"
            className={`tool-image${open === i ? " open" : ""}`}
            aria-expanded={open === i}
            title={open === i ? t("toolImages.shrink") : t("toolImages.enlarge")}
            onClick={() => setOpen(open === i ? null : i)}
          >
            <img src={`data:${image.mediaType};base64,${image.data}`} alt={label} data-testid="tool-image" />
          </button>
        );
      })}
    </div>
  );
}
