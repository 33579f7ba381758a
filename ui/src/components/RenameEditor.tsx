import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";
import type { AppError } from "../bindings";
import { InlineError } from "./InlineError";
import { CheckIcon, CloseIcon } from "./Icons";

type Props = {
  initial: string;
  /** Resolves to null when saved; on an error the editor stays open with the typed text and
   *  says why under it. */
  onSave: (title: string) => Promise<AppError | null>;
  onCancel: () => void;
};

/** Inline title editor: Enter saves, Escape cancels. */
export function RenameEditor({ initial, onSave, onCancel }: Props) {
  const { t } = useTranslation();
  const [value, setValue] = useState(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<AppError | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    inputRef.current?.focus();
    inputRef.current?.select();
  }, []);

  async function save() {
    if (busy) return;
    const trimmed = value.trim();
    if (trimmed === "" || trimmed === initial) {
      onCancel();
      return;
    }
    setBusy(true);
    const failed = await onSave(trimmed);
    setBusy(false);
    setError(failed);
    if (failed) inputRef.current?.focus();
  }

  function onKeyDown(event: KeyboardEvent<HTMLInputElement>) {
    if (event.key === "Enter") {
      event.preventDefault();
      void save();
    } else if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      onCancel();
    }
  }

  return (
    <div className="rename-editor" onClick={(e) => e.stopPropagation()}>
      <input
        ref={inputRef}
        type="text"
        className="text-input"
        data-testid="rename-input"
        aria-label={t("conversation.renameLabel", { title: initial })}
        value={value}
        readOnly={busy}
        onChange={(e) => {
          setValue(e.target.value);
          setError(null);
        }}
        onKeyDown={onKeyDown}
      />
      <button
        type="button"
        className="icon-button"
        data-testid="rename-save"
        aria-label={t("conversation.save")}
        title={t("conversation.save")}
        disabled={busy}
        onClick={() => void save()}
      >
        <CheckIcon />
      </button>
      <button
        type="button"
        className="icon-button"
        data-testid="rename-cancel"
        aria-label={t("conversation.cancel")}
        title={t("conversation.cancel")}
        onClick={onCancel}
      >
        <CloseIcon />
      </button>
      <div className="rename-error">
        <InlineError error={error} testId="rename-error" />
      </div>
    </div>
  );
}
