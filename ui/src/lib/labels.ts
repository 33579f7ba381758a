import type { TFunction } from "i18next";
import type { FailureClass } from "../bindings";

/** A switch over a union from the Rust side ends here: when Rust adds a member that a switch
 *  does not name, the type check fails at that switch rather than the window showing a raw
 *  name. */
export function unhandled(value: never): never {
  throw new Error(`a value the window does not know: ${String(value)}`);
}

/** What a failure class is called in the window's language. */
export function failureClassLabel(t: TFunction, c: FailureClass): string {
  switch (c) {
    case "transient":
      return t("recovery.classes.transient");
    case "data":
      return t("recovery.classes.data");
    case "logic":
      return t("recovery.classes.logic");
    case "permission":
      return t("recovery.classes.permission");
    case "system":
      return t("recovery.classes.system");
    case "context_overflow":
      return t("recovery.classes.context_overflow");
    case "cancelled":
      return t("recovery.classes.cancelled");
    default:
      return unhandled(c);
  }
}
