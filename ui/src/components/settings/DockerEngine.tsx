import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/call";
import { commands, type AppError, type EngineChoiceView } from "../../bindings";
import { InlineError } from "../InlineError";

/**
 * Which Docker engine runs the sandboxes: this computer's, a team's remote one over mutual TLS
 * (its address, and the folder of ca.pem, cert.pem and key.pem picked in the system's dialog),
 * or one reached through ssh (`ssh://user@host`, with the user's own keys). Saving reconnects;
 * the status line above says whether the engine answered.
 */
export function DockerEngine({ onSaved }: { onSaved: () => void }) {
  const { t } = useTranslation();
  const [choice, setChoice] = useState<EngineChoiceView | null>(null);
  const [host, setHost] = useState("");
  const [error, setError] = useState<AppError | null>(null);
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    let alive = true;
    // Outside the app's window (a plain browser) nothing answers, and nothing is shown.
    commands
      .sandboxEngineGet()
      .then((got) => {
        if (!alive) return;
        setChoice(got);
        setHost(got.host ?? "");
      })
      .catch(() => undefined);
    return () => {
      alive = false;
    };
  }, []);
  if (choice === null) return null;

  const save = async (chooseCerts: boolean, to: string = host) => {
    setSaved(false);
    const res = await call(() => commands.sandboxEngineSave(to, chooseCerts, t("settings.engine.certsTitle")));
    if (res.status === "error") {
      setError(res.error);
      return;
    }
    setError(null);
    setChoice(res.data);
    setHost(res.data.host ?? "");
    setSaved(true);
    onSaved();
  };

  return (
    <div className="docker-engine" data-testid="docker-engine">
      {choice.fromEnvironment !== null && (
        <p className="muted" data-testid="docker-engine-env">
          {t("settings.engine.fromEnvironment", { host: choice.fromEnvironment })}
        </p>
      )}
      <label className="settings-field">
        <span>{t("settings.engine.host")}</span>
        <input
          value={host}
          placeholder={t("settings.engine.local")}
          spellCheck={false}
          onChange={(e) => setHost(e.target.value)}
          data-testid="docker-engine-host"
        />
      </label>
      <p className="muted docker-engine-certs" data-testid="docker-engine-certs">
        {choice.certPath !== null ? t("settings.engine.certs", { path: choice.certPath }) : t("settings.engine.noCerts")}
      </p>
      <div className="dialog-actions">
        <button type="button" className="button" data-testid="docker-engine-choose" onClick={() => void save(true)}>
          {t("settings.engine.choose")}
        </button>
        <button type="button" className="button" data-testid="docker-engine-save" onClick={() => void save(false)}>
          {t("settings.engine.save")}
        </button>
        {choice.host !== null && (
          <button type="button" className="button" data-testid="docker-engine-local" onClick={() => void save(false, "")}>
            {t("settings.engine.useLocal")}
          </button>
        )}
      </div>
      <InlineError error={error} testId="docker-engine-error" />
      {saved && (
        <p className="muted" role="status" data-testid="docker-engine-saved">
          {choice.host === null
            ? t("settings.engine.savedLocal")
            : choice.host.startsWith("ssh://")
              ? t("settings.engine.savedSsh", { host: choice.host })
              : t("settings.engine.savedRemote", { host: choice.host })}
        </p>
      )}
    </div>
  );
}
