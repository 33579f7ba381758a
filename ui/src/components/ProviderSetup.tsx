import { useRef } from "react";
import { useTranslation } from "react-i18next";
import { useModal } from "../hooks/useModal";
import { ProviderForm } from "./provider/ProviderForm";

type Props = {
  /** Closes the setup; `added` is true once a provider works and is the default. */
  onClose: (added: boolean) => void;
};

/**
 * The first-start setup: the add-provider form Settings uses too, in a dialog, where a provider
 * that answers its test becomes the one runs use. What the test learned is shown before the
 * setup closes; closing then keeps the provider in use.
 */
export function ProviderSetup({ onClose }: Props) {
  const { t } = useTranslation();
  const dialog = useRef<HTMLDivElement>(null);
  // Set once a provider passed and is in use: closing the setup from then on keeps it.
  const passed = useRef(false);
  useModal(dialog, () => onClose(passed.current));
  return (
    <div className="overlay">
      <div ref={dialog} className="dialog setup-dialog" role="dialog" aria-modal="true" aria-label={t("setup.title")} data-testid="provider-setup">
        <h2>{t("setup.title")}</h2>
        <p className="muted">{t("setup.intro")}</p>
        <ProviderForm
          makeDefault
          onPassed={() => {
            passed.current = true;
          }}
          onDone={() => onClose(true)}
          secondary={
            <button type="button" className="button" onClick={() => onClose(false)}>
              {t("setup.later")}
            </button>
          }
        />
      </div>
    </div>
  );
}
