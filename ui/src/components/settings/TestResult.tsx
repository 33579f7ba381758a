import { useTranslation } from "react-i18next";
import type { Result } from "../../api/call";
import type { AppError, ProbeFailure, ProviderProbe } from "../../bindings";
import { probeSentence } from "../provider/probeSentence";
import { ProbeFacts } from "./ProbeFacts";

/**
 * A provider test's state: going, passed (with what the test learned of the window and the
 * server), or failed with a plain sentence and its details. What the test found is kept as
 * data: the sentence is written when shown, in the language the window speaks then (a result
 * kept in words stayed in the language it was shown in).
 */
export type Tested =
  | { state: "testing" }
  | { state: "passed"; probe: ProviderProbe }
  | { state: "failed"; probe: ProviderProbe & { failure: ProbeFailure } }
  | { state: "failed"; error: AppError };

/** What a finished test answered, as a provider row keeps it. */
export function testedOf(res: Result<ProviderProbe, AppError>): Tested {
  if (res.status === "error") return { state: "failed", error: res.error };
  return res.data.failure ? { state: "failed", probe: { ...res.data, failure: res.data.failure } } : { state: "passed", probe: res.data };
}

/** Pass or fail at a glance beside a provider, the sentence beside it, the details folded. */
export function TestResult({ result }: { result: Tested }) {
  const { t } = useTranslation();
  if (result.state === "testing") {
    return (
      <span className="provider-test-result" data-testid="provider-test-result" data-state="testing">
        {" "}
        {t("settings.testing")}
      </span>
    );
  }
  const sentence =
    "error" in result
      ? result.error.message
      : result.state === "failed"
        ? probeSentence(result.probe.failure, t)
        : t("settings.testOk", { ms: result.probe.elapsedMs });
  const detail = "probe" in result && result.state === "failed" ? result.probe.failure.detail : null;
  return (
    <div className={`provider-test-result test-${result.state}`} data-testid="provider-test-result" data-state={result.state} role="status">
      <span aria-hidden="true">{result.state === "passed" ? "✓" : "✗"}</span> {sentence}
      {result.state === "passed" && <ProbeFacts probe={result.probe} />}
      {detail && (
        <details className="provider-test-detail">
          <summary>{t("settings.probe.details")}</summary>
          <code>{detail}</code>
        </details>
      )}
    </div>
  );
}
