import { useTranslation } from "react-i18next";
import { LanguageSwitch } from "./LanguageSwitch";

export function Header() {
  const { t } = useTranslation();
  return (
    <header className="app-header">
      <h1 className="app-name" data-testid="app-name">
        {t("app.name")}
      </h1>
      <LanguageSwitch />
    </header>
  );
}
