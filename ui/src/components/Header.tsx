import { useTranslation } from "react-i18next";
import { LanguageSwitch } from "./LanguageSwitch";

export function Header({ onSettings }: { onSettings?: () => void }) {
  const { t } = useTranslation();
  return (
    <header className="app-header">
      <h1 className="app-name" data-testid="app-name">
        {t("app.name")}
      </h1>
      <div className="header-tools">
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
