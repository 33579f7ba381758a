import { useId, useRef, useState } from "react";
import { useTranslation } from "react-i18next";

type Props = {
  /** What the file is for, as the label in front of the button. */
  label: string;
  accept: string;
  testId: string;
  onFile: (file: File) => void;
};

/**
 * A file input in the window's language: the engine's own input says "Choose File" and "No
 * file chosen" in the system's language whatever the analyst chose. The native input stays
 * (visually hidden, labelled, focusable through the button) so the file dialog is the system's.
 */
export function FilePicker({ label, accept, testId, onFile }: Props) {
  const { t } = useTranslation();
  const input = useRef<HTMLInputElement>(null);
  const [chosen, setChosen] = useState<string | null>(null);
  const id = useId();
  return (
    <span className="file-picker">
      <label htmlFor={id}>{label}</label>{" "}
      <input
        id={id}
        ref={input}
        className="visually-hidden"
        type="file"
        accept={accept}
        tabIndex={-1}
        data-testid={testId}
        onChange={(e) => {
          const file = e.target.files?.[0];
          if (!file) return;
          setChosen(file.name);
          onFile(file);
          // The same file chosen again (after fixing it) is read again.
          e.target.value = "";
        }}
      />
      <button type="button" className="button button-small" data-testid={`${testId}-button`} onClick={() => input.current?.click()}>
        {t("filePicker.choose")}
      </button>{" "}
      <span className="muted" data-testid={`${testId}-chosen`}>
        {chosen ?? t("filePicker.none")}
      </span>
    </span>
  );
}
