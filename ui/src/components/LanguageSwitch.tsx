import { useTranslation } from "react-i18next";
import { LANGUAGES, currentLanguage, setLanguage } from "../i18n";

/** EN / 中文 segmented switch; the choice is saved in localStorage. */
export function LanguageSwitch() {
  const { t } = useTranslation();
  const active = currentLanguage();
  return (
    <div className="segmented" role="group" aria-label={t("language.label")} data-testid="language-switch">
      {LANGUAGES.map((lang) => (
        <button
          key={lang}
          type="button"
          data-lang={lang}
          aria-pressed={active === lang}
          className={active === lang ? "segmented-item active" : "segmented-item"}
          lang={lang === "zh" ? "zh-CN" : "en"}
          onClick={() => void setLanguage(lang)}
        >
          {t(`language.${lang}`)}
        </button>
      ))}
    </div>
  );
}
