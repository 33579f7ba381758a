import { describe, expect, it } from "vitest";
import i18n, { setLanguage } from "../i18n";
import type {
  CompactionTrigger,
  CompressionLevel,
  ExecutionStatus,
  FailureClass,
  RiskLevel,
  Severity,
  SummaryLevel,
  TodoStatus,
  WindowSourceView,
} from "../bindings";
import {
  answerEndLabel,
  compactionTriggerLabel,
  compressionLevelLabel,
  executionStatusLabel,
  failureClassLabel,
  riskLevelLabel,
  severityLabel,
  summaryLevelLabel,
  todoStatusLabel,
  windowSourceLabel,
} from "./labels";

const CLASSES: FailureClass[] = ["transient", "data", "logic", "permission", "system", "context_overflow", "cancelled", "degenerate"];

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

/** Each union the Rust side sends, every member, and the function that words it. */
const UNIONS: [string, string[], (value: never) => string][] = [
  ["risk level", ["none", "low", "medium", "high", "critical"] satisfies RiskLevel[], (v) => riskLevelLabel(i18n.t, v)],
  ["severity", ["low", "medium", "high", "critical"] satisfies Severity[], (v) => severityLabel(i18n.t, v)],
  [
    "todo status",
    ["pending", "in_progress", "completed", "failed", "skipped", "cancelled"] satisfies TodoStatus[],
    (v) => todoStatusLabel(i18n.t, v),
  ],
  [
    "execution status",
    ["queued", "running", "awaiting_user", "succeeded", "failed", "cancelled", "interrupted"] satisfies ExecutionStatus[],
    (v) => executionStatusLabel(i18n.t, v),
  ],
  ["compression level", ["standard", "deep", "phase", "checkpoint"] satisfies CompressionLevel[], (v) => compressionLevelLabel(i18n.t, v)],
  [
    "compaction trigger",
    ["auto", "manual", "phase", "checkpoint", "overflow"] satisfies CompactionTrigger[],
    (v) => compactionTriggerLabel(i18n.t, v),
  ],
  ["summary level", ["segment", "global"] satisfies SummaryLevel[], (v) => summaryLevelLabel(i18n.t, v)],
  ["window source", ["served", "preset", "configured"] satisfies WindowSourceView[], (v) => windowSourceLabel(i18n.t, v, "8,192")],
  ["answer end", ["cut", "stopped", "looping"], (v) => answerEndLabel(i18n.t, v)?.mark ?? ""],
];

describe("the labels of the other unions", () => {
  it("word every member in Chinese, never as the code the store keeps, and each differently", async () => {
    await setLanguage("zh");
    for (const [what, members, label] of UNIONS) {
      const words = members.map((m) => label(m as never));
      for (const [i, word] of words.entries()) {
        expect(word, `${what} ${members[i]}`).not.toBe(members[i]);
        expect(word, `${what} ${members[i]}`).not.toMatch(/^[a-z_.]+$/);
      }
      expect(new Set(words).size, what).toBe(members.length);
    }
    await setLanguage("en");
    expect(riskLevelLabel(i18n.t, "critical")).toBe("critical");
    expect(compactionTriggerLabel(i18n.t, "overflow")).toBe("the model refused a request as too long");
  });
});

describe("the marks of answers", () => {
  it("mark no complete answer, and explain each other one", async () => {
    await setLanguage("en");
    expect(answerEndLabel(i18n.t, "complete")).toBeNull();
    expect(answerEndLabel(i18n.t, "cut")?.mark).toBe("Cut by the output limit");
    expect(answerEndLabel(i18n.t, "looping")?.hint).toContain("over and over");
    expect(windowSourceLabel(i18n.t, "served", "8,192")).toBe("8,192 tokens, as the server reports");
  });
});
