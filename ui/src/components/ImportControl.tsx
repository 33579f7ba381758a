import { useTranslation } from "react-i18next";
import { CloseIcon } from "./Icons";

/** What an import left to say: how many conversations came in, and each file that did not. */
export type ImportNotice = {
  imported: number;
  /** `name` is null when the whole request failed rather than one file. */
  failed: { name: string | null; error: string }[];
};

type Props = {
  onImport: () => void;
  notice: ImportNotice | null;
  onDismiss: () => void;
};

/**
 * Import of conversations from JSONL files, by the open dialog or by dropping files on the
 * window. Failures are said here, where the import was asked for, file by file.
 */
export function ImportControl({ onImport, notice, onDismiss }: Props) {
  const { t } = useTranslation();
  return (
    <div className="import-control">
      <button type="button" className="link-button" onClick={onImport} data-testid="import-button" title={t("import.hint")}>
        {t("import.button")}
      </button>
      {notice && (
        <div
          className={notice.failed.length > 0 ? "import-notice import-failed" : "import-notice"}
          role={notice.failed.length > 0 ? "alert" : "status"}
          data-testid="import-notice"
        >
          <div className="import-notice-text">
            {notice.imported > 0 && <p>{t("import.imported", { count: notice.imported })}</p>}
            {notice.failed.map((f, i) => (
              <p key={`${f.name ?? ""}:${i}`} data-testid="import-error">
                {f.name ? <strong>{f.name}: </strong> : null}
                {f.error}
              </p>
            ))}
          </div>
          <button type="button" className="icon-button" onClick={onDismiss} aria-label={t("import.dismiss")}>
            <CloseIcon />
          </button>
        </div>
      )}
    </div>
  );
}
