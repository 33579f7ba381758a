import { useTranslation } from "react-i18next";
import { CopyButton } from "./CopyButton";

/**
 * Where no file manager opened a folder (none is installed, or none answers): its path, to
 * paste into whatever the analyst uses, with Copy. Not an error box with an exit status.
 */
export function FolderNotOpened({ path, testId }: { path: string; testId: string }) {
  const { t } = useTranslation();
  return (
    <p className="folder-not-opened muted" role="status" data-testid={testId}>
      {t("workspace.noFileManager")} <code>{path}</code> <CopyButton text={() => path} testId={`${testId}-copy`} />
    </p>
  );
}
