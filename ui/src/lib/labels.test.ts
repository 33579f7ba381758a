import { describe, expect, it } from "vitest";
import i18n, { setLanguage } from "../i18n";
import type { FailureClass } from "../bindings";
import { failureClassLabel } from "./labels";

const CLASSES: FailureClass[] = ["transient", "data", "logic", "permission", "system", "context_overflow", "cancelled"];

describe("failure class labels", () => {
  it("name every class in words in both languages, never as its code", async () => {
    for (const lang of ["en", "zh"] as const) {
      await setLanguage(lang);
      const labels = CLASSES.map((c) => failureClassLabel(i18n.t, c));
      for (const [i, label] of labels.entries()) {
        expect(label).not.toContain("recovery.classes");
        expect(label).not.toBe(CLASSES[i]);
      }
      expect(new Set(labels).size).toBe(CLASSES.length);
    }
    await setLanguage("en");
    expect(failureClassLabel(i18n.t, "context_overflow")).toBe("The context overflowed");
  });
});
