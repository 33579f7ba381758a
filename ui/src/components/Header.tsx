import { useTranslation } from "react-i18next";
import { SidebarIcon } from "./Icons";
import { LanguageSwitch } from "./LanguageSwitch";

type Props = {
  onSettings?: () => void;
  /** Opens the list of keyboard shortcuts. */
  onShortcuts?: () => void;
  /** Shows or hides the conversations; absent where there is no sidebar. */
  sidebar?: { shown: boolean; onToggle: () => void };
};

export function Header({ onSettings, onShortcuts, sidebar }: Props) {
  const { t } = useTranslation();
  return (
    <header className="app-header">
      <div className="header-start">
        {sidebar && (
          <button
            type="button"
            className="button button-small icon-button"
            data-testid="sidebar-toggle"
            aria-controls="conversations-sidebar"
            aria-expanded={sidebar.shown}
            title={sidebar.shown ? t("sidebar.hide") : t("sidebar.show")}
            aria-label={sidebar.shown ? t("sidebar.hide") : t("sidebar.show")}
            onClick={sidebar.onToggle}
          >
            <SidebarIcon />
          </button>
        )}
        <h1 className="app-name" data-testid="app-name">
          {t("app.name")}
        </h1>
      </div>
      <div className="header-tools">
        {onShortcuts && (
          <button
            type="button"
            className="button button-small"
            data-testid="shortcuts-button"
            aria-haspopup="dialog"
            title={t("shortcuts.label")}
            onClick={onShortcuts}
          >
            {t("shortcuts.button")}
          </button>
        )}
        {onSettings && (
          <button type="button" className="button button-small" data-testid="settings-button" aria-haspopup="dialog" onClick={onSettings}>
            {t("settings.label")}
          </button>
        )}
        <LanguageSwitch />
      </div>
    </header>
  );
}
