import { useEffect, useId, useState } from "react";
import { NEW_LINE_CHORD, SEND_CHORDS, onSendKeyChange, savedSendKey, sends } from "../lib/sendKey";
import { shortcutLabel } from "../lib/platform";
import { useTranslation } from "react-i18next";
import type { AppError } from "../bindings";
import { InlineError } from "./InlineError";

type Props = {
  live: boolean;
  /** Why the conversation cannot take a task now (another run, a chat turn…), if it cannot. */
  busyReason: string | null;
  /** Why the last send failed, said above the field until the next send works. */
  error?: AppError | null;
  /** Resolves to whether the task was started (the text is then cleared). */
  onSend: (task: string) => Promise<boolean>;
  onStop: () => void;
  /**
   * Set while a failure waits for the analyst's choice: what they send then is guidance that
   * goes with the choice (the recovery panel opens with it), never dropped.
   */
  onGuide?: ((text: string) => void) | null;
  /** Quick chat beside Send: the message is answered with no tools, plan or review. */
  quick?: { on: boolean; onChange: (on: boolean) => void } | null;
};

/** The task field's id, which the focus-the-composer shortcut focuses. */
export const COMPOSER_INPUT = "composer-input";

/** Where the analyst gives the agent a task, and stops it. */
export function Composer({ live, busyReason, onSend, onStop, onGuide = null, error = null, quick = null }: Props) {
  const { t } = useTranslation();
  const [task, setTask] = useState("");
  const [sending, setSending] = useState(false);
  const [sendKey, setSendKey] = useState(savedSendKey);
  useEffect(() => onSendKeyChange(setSendKey), []);
  const reasonId = useId();
  const empty = task.trim() === "";
  const blocked = busyReason !== null && !live;

  const send = async () => {
    if (!empty && onGuide) {
      onGuide(task.trim());
      setTask("");
      return;
    }
    if (empty || live || sending || blocked) return;
    setSending(true);
    const started = await onSend(task.trim());
    setSending(false);
    if (started) setTask("");
  };

  return (
    <>
      <InlineError error={error} testId="send-error" />
      {blocked && (
        <p className="composer-busy" id={reasonId} role="status" data-testid="composer-busy">
          {busyReason}
        </p>
      )}
      <form
        className="composer"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <textarea
          className="composer-input"
          id={COMPOSER_INPUT}
          aria-label={t("composer.label")}
          placeholder={
            sendKey === "enter"
              ? t("composer.placeholderEnter", { send: shortcutLabel(SEND_CHORDS.enter), newLine: shortcutLabel(NEW_LINE_CHORD) })
              : t("composer.placeholder", { keys: shortcutLabel(SEND_CHORDS[sendKey]) })
          }
          data-testid="composer-input"
          value={task}
          rows={2}
          onChange={(e) => setTask(e.target.value)}
          onKeyDown={(e) => {
            if (sends(e, sendKey)) {
              e.preventDefault();
              void send();
            }
          }}
        />
        {onGuide && !empty && (
          <button type="submit" className="button button-primary" data-testid="send-guidance">
            {t("composer.guide")}
          </button>
        )}
        {quick && !live && (
          <label className="composer-quick" title={t("composer.quickHint")} data-testid="quick-chat">
            <input type="checkbox" checked={quick.on} data-testid="quick-chat-toggle" onChange={(e) => quick.onChange(e.target.checked)} />
            {t("composer.quick")}
          </label>
        )}
        {live ? (
          <button type="button" className="button button-danger" data-testid="stop" onClick={onStop}>
            {t("composer.stop")}
          </button>
        ) : (
          <button
            type="submit"
            className="button button-primary"
            data-testid="send"
            disabled={empty || sending || blocked}
            aria-describedby={blocked ? reasonId : undefined}
          >
            {t("composer.send")}
          </button>
        )}
      </form>
    </>
  );
}
