import { describe, expect, it } from "vitest";
import { isDefaultTitle, titleFrom } from "./autoTitle";

describe("automatic titles", () => {
  it("know the untitled title in every language and take the first line of the task", () => {
    expect(isDefaultTitle("Untitled conversation")).toBe(true);
    expect(isDefaultTitle("未命名对话")).toBe(true);
    expect(isDefaultTitle("Q3 ledger")).toBe(false);
    expect(titleFrom("\n  Total the Q3 invoices by region  \nand chart them")).toBe("Total the Q3 invoices by region");
    expect(titleFrom("x".repeat(70))).toBe(`${"x".repeat(60)}…`);
    expect(titleFrom("  \n ")).toBeNull();
  });
});
