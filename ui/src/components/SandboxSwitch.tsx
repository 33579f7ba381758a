import { useState } from "react";
import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import { call } from "../api/call";
import { commands, type AppError, type WorkspaceTransferView } from "../bindings";
import { formatBytes } from "../lib/format";
import { InlineError } from "./InlineError";

/** "host" or "docker": where a conversation's runs work. */
export type SandboxName = "host" | "docker";

/** A switch the analyst asked for while the place it leaves holds files. */
export type PendingSwitch = {
  /** What the sandbox select was set to ("" follows the settings). */
  value: string;
  from: SandboxName;
  to: SandboxName;
  files: number;
  bytes: number;
};

/**
 * Asks before a switch leaves files behind: a run in the container cannot see the host folder
 * (nor the other way round), and the agent's next `read_csv` would fail on a file the analyst
 * sees. Offers to copy them across, to switch without them, or to stay.
 */
export function SandboxSwitchPrompt({
  conversationId,
  pending,
  onSave,
  onDone,
}: {
  conversationId: string;
  pending: PendingSwitch;
  /** Saves the switch; resolves to whether it was saved. */
  onSave: (value: string) => Promise<boolean>;
  /** The prompt is answered: switched or not, and what was copied. */
  onDone: (switched: boolean, copied: WorkspaceTransferView | null) => void;
}) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [working, setWorking] = useState(false);
  const [error, setError] = useState<AppError | null>(null);
  // Saved, then the copy failed: the switch stands, and leaving says so.
  const [switched, setSwitched] = useState(false);
  const fromPlace = t(`sandboxSwitch.places.${pending.from}`);
  const toPlace = t(`sandboxSwitch.places.${pending.to}`);

  const switchAndCopy = async () => {
    setWorking(true);
    if (!(await onSave(pending.value))) {
      setWorking(false);
      return;
    }
    setSwitched(true);
    const res = await call(() => commands.workspaceCopyAcross(conversationId, pending.from));
    setWorking(false);
    if (res.status === "ok") onDone(true, res.data);
    else setError(res.error);
  };
  const switchOnly = async () => {
    setWorking(true);
    const saved = await onSave(pending.value);
    setWorking(false);
    if (saved) onDone(true, null);
  };

  return (
    <div className="sandbox-switch" role="alertdialog" aria-labelledby="sandbox-switch-text" data-testid="sandbox-switch">
      <p id="sandbox-switch-text">
        {t("sandboxSwitch.warning", { count: pending.files, size: formatBytes(pending.bytes, lang), from: fromPlace, to: toPlace })}
      </p>
      <div className="sandbox-switch-actions">
        <button type="button" className="button button-primary button-small" data-testid="sandbox-switch-copy" disabled={working} onClick={() => void switchAndCopy()}>
          {t("sandboxSwitch.copy", { count: pending.files })}
        </button>
        <button type="button" className="button button-small" data-testid="sandbox-switch-only" disabled={working} onClick={() => void switchOnly()}>
          {t("sandboxSwitch.only", { count: pending.files })}
        </button>
        <button type="button" className="button button-small" data-testid="sandbox-switch-cancel" disabled={working} onClick={() => onDone(switched, null)}>
          {switched ? t("sandboxSwitch.close") : t("sandboxSwitch.cancel")}
        </button>
      </div>
      <InlineError error={error} testId="sandbox-switch-error" />
    </div>
  );
}

/** What a copy across did, in one sentence: the files copied, and those kept as they were. */
export function transferText(t: TFunction, done: WorkspaceTransferView, to: SandboxName, lang: string): string {
  const place = t(`sandboxSwitch.placesTo.${to}`);
  const copied = t("sandboxSwitch.copied", { count: done.copied.length, to: place, size: formatBytes(done.bytes ?? 0, lang) });
  return done.kept.length === 0 ? copied : `${copied} ${t("sandboxSwitch.kept", { count: done.kept.length, names: done.kept.slice(0, 3).join(", ") })}`;
}
