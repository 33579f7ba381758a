import { describe, expect, it } from "vitest";
import { markPattern, searchWords, splitMarks } from "./marks";

describe("search marks", () => {
  it("finds every word of the search, case-insensitive, longest first", () => {
    expect(searchWords('ledger  "Q3" a')).toEqual(["ledger", "Q3"]);
    const pieces = splitMarks("The Ledger of q3: ledger_q3.csv", markPattern(["ledger", "q3"]));
    expect(pieces.filter((p) => p.marked).map((p) => p.text)).toEqual(["Ledger", "q3", "ledger", "q3"]);
    expect(pieces.map((p) => p.text).join("")).toBe("The Ledger of q3: ledger_q3.csv");
    expect(splitMarks("nothing here", markPattern(["zz"]))).toEqual([{ text: "nothing here", marked: false }]);
    expect(markPattern([])).toBeNull();
    expect(splitMarks("a.b", markPattern(["."]))).toEqual([
      { text: "a", marked: false },
      { text: ".", marked: true },
      { text: "b", marked: false },
    ]);
  });
});
