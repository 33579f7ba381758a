import { useCallback, useState } from "react";
import type { AppError } from "../bindings";

export type ReportError = (error: AppError) => void;

/** One visible error at a time; a new one replaces the old. */
export function useErrorBanner() {
  const [error, setError] = useState<AppError | null>(null);
  const report = useCallback<ReportError>((e) => setError(e), []);
  const dismiss = useCallback(() => setError(null), []);
  return { error, report, dismiss };
}
