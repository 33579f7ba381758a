import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { commands, type AppAbout } from "../../bindings";

/**
 * The release, the commit and the day of this build, as `decima --version` prints them: what an
 * analyst quotes when something goes wrong, so the report names the exact code.
 */
export function About() {
  const { t } = useTranslation();
  const [about, setAbout] = useState<AppAbout | null>(null);
  useEffect(() => {
    let alive = true;
    // Outside the app's window (a plain browser) nothing answers, and nothing is shown.
    commands
      .appAbout()
      .then((a) => {
        if (alive) setAbout(a);
      })
      .catch(() => undefined);
    return () => {
      alive = false;
    };
  }, []);
  if (about === null) return null;
  return (
    <section className="settings-about" aria-label={t("settings.about.title")} data-testid="settings-about">
      {/* One line at the foot of Settings, in sight in every section; the heading is for readers. */}
      <h3 className="visually-hidden">{t("settings.about.title")}</h3>
      <p className="muted">
        {t("settings.about.line", { version: about.version, commit: about.commit, built: about.built })}
      </p>
    </section>
  );
}
