import { useRef } from "react";
import { useTranslation } from "react-i18next";
import { useModal } from "../hooks/useModal";
import { SHORTCUTS } from "../hooks/useShortcuts";
import { shortcutLabel } from "../lib/platform";

/** The list of keyboard shortcuts (Ctrl+/, ⌘/ on macOS), written as the platform writes them. */
export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const dialog = useRef<HTMLDivElement>(null);
  useModal(dialog, onClose);
  return (
    <div className="overlay">
      <div ref={dialog} className="dialog shortcuts-dialog" role="dialog" aria-modal="true" aria-label={t("shortcuts.label")} data-testid="shortcuts-dialog">
        <h2>{t("shortcuts.label")}</h2>
        <dl className="shortcuts">
          {SHORTCUTS.map((s) => (
            <div key={s.action} className="shortcut" data-testid="shortcut">
              <dt>
                <kbd>{shortcutLabel(s.keys)}</kbd>
              </dt>
              <dd>{t(`shortcuts.actions.${s.action}`)}</dd>
            </div>
          ))}
        </dl>
        <div className="dialog-actions">
          <button type="button" className="button" data-testid="shortcuts-close" onClick={onClose}>
            {t("shortcuts.close")}
          </button>
        </div>
      </div>
    </div>
  );
}
