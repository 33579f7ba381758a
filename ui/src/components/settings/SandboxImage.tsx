import { Channel } from "@tauri-apps/api/core";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/call";
import { commands, type AppError, type ImageBuildEvent, type SandboxImageView } from "../../bindings";
import { InlineError } from "../InlineError";

/** How far a build is: its step, the packages fetched and unpacked, and the tool's last line. */
type Progress = { step: string; fetched: number; unpacked: number; line: string };

function advance(p: Progress, event: ImageBuildEvent): Progress {
  if (event.type === "step") return { ...p, step: event.text };
  const fetched = event.line.startsWith("Get:") ? p.fetched + 1 : p.fetched;
  const unpacked = event.line.startsWith("Unpacking ") ? p.unpacked + 1 : p.unpacked;
  return { ...p, fetched, unpacked, line: event.line };
}

/**
 * The analyst's sandbox image: whether it is built from this Decima's recipe, and a button that
 * builds it (minutes), showing each step and the packages fetched and unpacked as they go.
 */
export function SandboxImage({ image, onBuilt }: { image: SandboxImageView; onBuilt: (image: SandboxImageView) => void }) {
  const { t, i18n } = useTranslation();
  const [progress, setProgress] = useState<Progress | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const building = progress !== null;

  const build = async () => {
    setError(null);
    setProgress({ step: "", fetched: 0, unpacked: 0, line: "" });
    const channel = new Channel<ImageBuildEvent>();
    channel.onmessage = (event) => setProgress((p) => (p === null ? p : advance(p, event)));
    // A current image is built again only when asked to, from scratch.
    const res = await call(() => commands.sandboxImageBuild(image.present && image.current, channel));
    setProgress(null);
    if (res.status === "ok") onBuilt(res.data);
    else setError(res.error);
  };

  const state = !image.present
    ? t("sandboxImage.missing", { name: image.name })
    : image.current
      ? t("sandboxImage.current", {
          name: image.name,
          size: image.sizeMb ?? 0,
          created: image.created ? new Date(image.created).toLocaleString(i18n.resolvedLanguage) : "",
        })
      : t("sandboxImage.outdated", { name: image.name });
  const action = !image.present ? "build" : image.current ? "rebuild" : "update";

  return (
    <div className="sandbox-image" data-testid="sandbox-image" data-state={!image.present ? "missing" : image.current ? "current" : "outdated"}>
      <p>{state}</p>
      {image.buildingElsewhere && progress === null && (
        <p role="status" data-testid="sandbox-image-elsewhere">
          {t("sandboxImage.elsewhere")}
        </p>
      )}
      <p className="muted">{t("sandboxImage.contents")}</p>
      <button type="button" className="button button-small" data-testid="sandbox-image-build" disabled={building} onClick={() => void build()}>
        {t(`sandboxImage.${action}`)}
      </button>
      {progress !== null && (
        <div role="status" data-testid="sandbox-image-progress">
          <p>
            {progress.step === "" ? t("sandboxImage.starting") : progress.step} ·{" "}
            {t("sandboxImage.counts", { fetched: progress.fetched, unpacked: progress.unpacked })}
          </p>
          {progress.line !== "" && <p className="muted sandbox-image-line">{progress.line}</p>}
        </div>
      )}
      <InlineError error={error} testId="sandbox-image-error" />
    </div>
  );
}
