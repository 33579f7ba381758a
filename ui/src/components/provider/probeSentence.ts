import type { TFunction } from "i18next";
import type { ProbeFailure } from "../../bindings";

/**
 * One plain sentence for a failed provider test, in the window's language: the same words in the
 * add form (first start and Settings) and beside a provider's Test button.
 */
export function probeSentence(failure: ProbeFailure, t: TFunction): string {
  const known = ["unreachable", "unauthorized", "not_found", "rate_limited", "http", "timeout"] as const;
  const kind = known.find((k) => k === failure.kind) ?? "other";
  return t(`settings.probe.${kind}`, { url: failure.url, status: failure.status ?? "" });
}
