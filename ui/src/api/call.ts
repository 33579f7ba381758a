import type { AppError } from "../bindings";

/** The status-tagged result every generated command resolves to. */
export type Result<T, E> = { status: "ok"; data: T } | { status: "error"; error: E };

/**
 * Runs one command from `bindings.ts` and never throws: the generated
 * bindings re-throw JavaScript `Error`s (e.g. the IPC bridge is missing),
 * which we fold into an `internal` AppError so the UI can show it.
 */
export async function call<T>(run: () => Promise<Result<T, AppError>>): Promise<Result<T, AppError>> {
  try {
    return await run();
  } catch (e) {
    return { status: "error", error: toAppError(e) };
  }
}

export function toAppError(e: unknown): AppError {
  if (isAppError(e)) return e;
  if (e instanceof Error) return { code: "internal", message: e.message };
  return { code: "internal", message: String(e) };
}

function isAppError(e: unknown): e is AppError {
  return (
    typeof e === "object" &&
    e !== null &&
    typeof (e as { code?: unknown }).code === "string" &&
    typeof (e as { message?: unknown }).message === "string"
  );
}
