import { useRef } from "react";
import { useTranslation } from "react-i18next";
import type { FigureView, ReceiptView } from "../bindings";
import { useModal } from "../hooks/useModal";

type Props = { figure: FigureView; receipt: ReceiptView; onClose: () => void };

/**
 * The tenth man's receipt for a figure it recomputed: the value it reached from the run's
 * inputs, how, and its commands and files, so the analyst can check the check itself.
 */
export function ReceiptDialog({ figure, receipt, onClose }: Props) {
  const { t } = useTranslation();
  const dialog = useRef<HTMLDivElement>(null);
  useModal(dialog, onClose);
  const title = t("figures.receipt.title", { figure: figure.text });
  return (
    <div className="overlay">
      <div ref={dialog} className="dialog receipt-dialog" role="dialog" aria-modal="true" aria-label={title} data-testid="figure-receipt">
        <h2>{title}</h2>
        <p data-testid="figure-receipt-verdict">
          {receipt.value === null
            ? t("figures.receipt.none")
            : receipt.agrees
              ? t("figures.receipt.agrees", { value: receipt.value })
              : t("figures.receipt.differs", { value: receipt.value, figure: figure.text })}
        </p>
        <h3>{t("figures.receipt.how")}</h3>
        <p className="receipt-derivation">{receipt.derivation}</p>
        <h3>{t("figures.receipt.code")}</h3>
        <pre className="receipt-code" data-testid="figure-receipt-code">
          {receipt.code}
        </pre>
        <div className="dialog-actions">
          <button type="button" className="button button-primary" data-testid="figure-receipt-close" onClick={onClose}>
            {t("workspace.close")}
          </button>
        </div>
      </div>
    </div>
  );
}
