import { useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { shortcutLabel } from "../../lib/platform";
import { saveSendKey, savedSendKey, SEND_CHORDS, SEND_KEYS, type SendKey } from "../../lib/sendKey";
import { applyTheme, savedTheme, THEMES, type Theme } from "../../lib/theme";
import { LanguageSwitch } from "../LanguageSwitch";

/**
 * How the window looks and answers: its language, its theme, and the key that sends a task.
 * Each is saved at once in this window's storage.
 */
export function Appearance() {
  const { t } = useTranslation();
  const [theme, setTheme] = useState<Theme>(savedTheme());
  const [sendKey, setSendKey] = useState<SendKey>(savedSendKey);
  return (
    <section aria-label={t("settings.sections.appearance")} data-testid="appearance">
      <h3>{t("settings.sections.appearance")}</h3>
      <Row label={t("language.label")}>
        <LanguageSwitch />
      </Row>
      <Row label={t("settings.theme")}>
        <div className="segmented" role="group" aria-label={t("settings.theme")} data-testid="theme-switch">
          {THEMES.map((th) => (
            <button
              key={th}
              type="button"
              data-theme-choice={th}
              aria-pressed={theme === th}
              className={theme === th ? "segmented-item active" : "segmented-item"}
              onClick={() => {
                applyTheme(th);
                setTheme(th);
              }}
            >
              {t(`settings.themes.${th}`)}
            </button>
          ))}
        </div>
      </Row>
      <Row label={t("settings.sendKey")}>
        <div className="segmented" role="group" aria-label={t("settings.sendKey")} data-testid="send-key-switch">
          {SEND_KEYS.map((key) => (
            <button
              key={key}
              type="button"
              data-send-key={key}
              aria-pressed={sendKey === key}
              className={sendKey === key ? "segmented-item active" : "segmented-item"}
              onClick={() => {
                saveSendKey(key);
                setSendKey(key);
              }}
            >
              {t(`settings.sendKeys.${key}`, { keys: shortcutLabel(SEND_CHORDS[key]) })}
            </button>
          ))}
        </div>
      </Row>
    </section>
  );
}

/** A choice with its name beside it; the choice's own group carries the same name for readers. */
function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="settings-row">
      <span className="settings-row-label" aria-hidden="true">
        {label}
      </span>
      {children}
    </div>
  );
}
