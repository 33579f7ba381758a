import { describe, expect, it } from "vitest";
import { formatCompact, formatCost, formatRelative, prettyJson } from "./format";

const now = new Date("2026-03-10T12:00:00Z");

describe("formatRelative", () => {
  it("returns null (just now) under 45 seconds", () => {
    expect(formatRelative("2026-03-10T11:59:30Z", "en", now)).toBeNull();
  });

  it("uses minutes, hours and days within a week", () => {
    expect(formatRelative("2026-03-10T11:55:00Z", "en", now)).toBe("5 min. ago");
    expect(formatRelative("2026-03-10T09:00:00Z", "en", now)).toBe("3 hr. ago");
    expect(formatRelative("2026-03-09T12:00:00Z", "en", now)).toBe("yesterday");
  });

  it("falls back to a short date after a week, with the year only when it differs", () => {
    expect(formatRelative("2026-02-01T12:00:00Z", "en", now)).toBe("Feb 1");
    expect(formatRelative("2025-02-01T12:00:00Z", "en", now)).toBe("Feb 1, 2025");
  });

  it("returns unparsable input unchanged", () => {
    expect(formatRelative("not a date", "en", now)).toBe("not a date");
  });

  it("speaks Chinese", () => {
    expect(formatRelative("2026-03-10T09:00:00Z", "zh", now)).toBe("3小时前");
  });
});

describe("prettyJson", () => {
  it("indents valid JSON", () => {
    expect(prettyJson('{"a":1,"b":[true]}')).toEqual({ ok: true, text: '{\n  "a": 1,\n  "b": [\n    true\n  ]\n}' });
  });

  it("returns invalid JSON as is", () => {
    expect(prettyJson("{oops")).toEqual({ ok: false, text: "{oops" });
  });
});

describe("formatCompact", () => {
  it("abbreviates large counts", () => {
    expect(formatCompact(1234, "en")).toBe("1.2K");
    expect(formatCompact(999, "en")).toBe("999");
  });
});

describe("formatCost", () => {
  it("gives a fraction of a cent the digits it needs, never $0.00", () => {
    expect(formatCost(0.0042, "en")).toBe("$0.0042");
    expect(formatCost(0.00037, "en")).toBe("$0.00037");
    expect(formatCost(0.00004, "en")).toBe("< $0.0001");
    expect(formatCost(0, "en")).toBe("$0");
    expect(formatCost(0.125, "en")).toBe("$0.125");
    expect(formatCost(12.5, "en")).toBe("$12.50");
    expect(formatCost(1234.5, "en")).toBe("$1,234.50");
    expect(formatCost(0.0042, "zh")).toBe("US$0.0042");
  });
});
