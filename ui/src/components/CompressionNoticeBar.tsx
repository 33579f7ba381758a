import { useTranslation } from "react-i18next";
import type { CompressionNotice } from "../hooks/useCompressionNotices";
import { formatNumber } from "../lib/format";
import { CloseIcon } from "./Icons";

type Props = {
  notice: CompressionNotice;
  /** False once the compaction can no longer be undone (a newer one is in force). */
  undoable: boolean;
  onUndo: () => void;
  onDismiss: () => void;
};

/**
 * Says that the context was just compressed, manually or by a run, and offers Undo. It stands
 * outside the message list, so it is in sight without scrolling, and stays until dismissed or
 * undone.
 */
export function CompressionNoticeBar({ notice, undoable, onUndo, onDismiss }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const tokens = { before: formatNumber(notice.tokensBefore, lang), after: formatNumber(notice.tokensAfter, lang) };
  return (
    <div
      className="compaction-notice"
      role="status"
      data-testid="compaction-notice"
      data-compaction-id={notice.compactionId}
      data-trigger={notice.trigger}
    >
      <span className="compaction-notice-text">
        {notice.trigger === "manual" ? t("compress.manualNotice", tokens) : t("compress.autoNotice", tokens)}
      </span>
      {undoable && (
        <button type="button" className="link-button" data-testid="compaction-notice-undo" onClick={onUndo}>
          {t("compress.undo")}
        </button>
      )}
      <button
        type="button"
        className="icon-button"
        data-testid="compaction-notice-dismiss"
        aria-label={t("compress.dismiss")}
        title={t("compress.dismiss")}
        onClick={onDismiss}
      >
        <CloseIcon />
      </button>
    </div>
  );
}
