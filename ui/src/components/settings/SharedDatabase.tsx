import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/call";
import { commands, type AppError, type DatabaseView } from "../../bindings";
import { InlineError } from "../InlineError";

/**
 * Which store this desktop opens: this computer's file, or a team's shared PostgreSQL database.
 * Saving checks that the database answers with this build's schema; the password goes to the
 * keyring (or the file Settings names) and is never shown again. A choice takes effect at the
 * next start, because the open store serves every view and run of the window.
 */
export function SharedDatabase() {
  const { t } = useTranslation();
  const [view, setView] = useState<DatabaseView | null>(null);
  const [url, setUrl] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<AppError | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    let alive = true;
    // Outside the app's window (a plain browser) nothing answers, and nothing is shown.
    commands
      .databaseGet()
      .then((res) => {
        if (!alive || res.status !== "ok") return;
        setView(res.data);
        setUrl(res.data.savedUrl ?? "");
      })
      .catch(() => undefined);
    return () => {
      alive = false;
    };
  }, []);
  if (view === null) return null;

  const done = (res: { status: "ok"; data: DatabaseView } | { status: "error"; error: AppError }) => {
    setBusy(false);
    if (res.status === "error") {
      setError(res.error);
      return;
    }
    setError(null);
    setPassword("");
    setView(res.data);
    setUrl(res.data.savedUrl ?? "");
  };
  const save = async () => {
    setBusy(true);
    done(await call(() => commands.databaseSave(url, password)));
  };
  const forget = async () => {
    setBusy(true);
    done(await call(() => commands.databaseForget()));
  };

  return (
    <section aria-label={t("settings.database.title")} data-testid="shared-database">
      <h3>{t("settings.database.title")}</h3>
      <p className="muted" data-testid="shared-database-open">
        {view.shared ? t("settings.database.openShared", { url: view.open }) : t("settings.database.openLocal", { path: view.open })}
      </p>
      {view.fromEnvironment !== null && (
        <p className="muted" data-testid="shared-database-env">
          {t("settings.database.fromEnvironment", { url: view.fromEnvironment })}
        </p>
      )}
      {view.openError !== null && (
        <p className="inline-error" role="alert" data-testid="shared-database-open-error">
          {t("settings.database.openFailed", { reason: view.openError })}
        </p>
      )}
      <label className="settings-field shared-database-url">
        <span>{t("settings.database.url")}</span>
        <input
          value={url}
          placeholder="postgres://analyst@db.example.org:5432/decima?sslmode=verify-full"
          spellCheck={false}
          autoComplete="off"
          onChange={(e) => setUrl(e.target.value)}
          data-testid="shared-database-url"
        />
      </label>
      <label className="settings-field">
        <span>{t("settings.database.password")}</span>
        <input
          type="password"
          value={password}
          placeholder={view.passwordInKeyring || view.passwordFile !== null ? t("settings.database.keepPassword") : ""}
          autoComplete="off"
          onChange={(e) => setPassword(e.target.value)}
          data-testid="shared-database-password"
        />
      </label>
      {(view.passwordInKeyring || view.passwordFile !== null) && (
        <p className="muted" data-testid="shared-database-password-place">
          {view.passwordFile !== null
            ? t("settings.database.passwordInFile", { path: view.passwordFile })
            : t("settings.database.passwordInKeyring")}
        </p>
      )}
      <div className="dialog-actions">
        <button
          type="button"
          className="button"
          disabled={busy || url.trim() === ""}
          data-testid="shared-database-save"
          onClick={() => void save()}
        >
          {busy ? t("settings.database.checking") : t("settings.database.save")}
        </button>
        {view.savedUrl !== null && (
          <button type="button" className="button" disabled={busy} data-testid="shared-database-forget" onClick={() => void forget()}>
            {t("settings.database.useLocal")}
          </button>
        )}
      </div>
      <InlineError error={error} testId="shared-database-error" />
      {view.restartNeeded && (
        <p className="muted" role="status" data-testid="shared-database-restart">
          {view.savedUrl !== null
            ? t("settings.database.restartShared", { url: view.savedUrl })
            : t("settings.database.restartLocal")}
        </p>
      )}
    </section>
  );
}
