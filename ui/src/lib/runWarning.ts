import type { TFunction } from "i18next";

/**
 * The runtime's warnings are English lines written for the command line too. The ones about a
 * run's final tenth-man review are said here in the window's words, and a clause that tells a
 * command-line user which flag to pass becomes what to do in the window. Any other warning is
 * shown as it came. (The runtime sends these as plain text, with no kind to key them on: the
 * known sentences are matched here.)
 */
const SKIPPED = /^the final tenth-man review was skipped\b/;
const CANCELLED = /^the final tenth-man review was cancelled\b/;
const FAILED = /^the final tenth-man review failed: ([\s\S]*)$/;
/** The reviewer answered twice with no valid review: the advice names no place to do it. */
const ANOTHER_REVIEWER = /\s*Try again, or review with another provider\.?/;

/** A warning of a run, in the window's words where it is one the window knows. */
export function warningText(t: TFunction, message: string): string {
  if (SKIPPED.test(message)) return t("run.review.skipped");
  if (CANCELLED.test(message)) return t("run.review.cancelled");
  const failed = FAILED.exec(message);
  if (failed) return t("run.review.failed", { reason: withoutCliFlags(t, failed[1] ?? "") });
  return withoutCliFlags(t, message);
}

/** `message` with the command line's advice (pass such a flag) said as what to do in the window. */
export function withoutCliFlags(t: TFunction, message: string): string {
  return message.replace(ANOTHER_REVIEWER, () => ` ${t("run.review.tryAnotherReviewer")}`);
}
