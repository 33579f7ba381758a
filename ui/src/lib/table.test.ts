import { describe, expect, it } from "vitest";
import { asNumber, formatCell, numericColumns, sortRows, toTsv } from "./table";

describe("tables", () => {
  it("tells numbers from text and writes them with the language's separators", () => {
    expect(asNumber("1,204.50")).toBe(1204.5);
    expect(asNumber("-3")).toBe(-3);
    expect(asNumber("12.5%")).toBeNull();
    expect(asNumber("INV-1")).toBeNull();
    expect(asNumber("1,20")).toBeNull();
    expect(formatCell("1204.50", "en")).toBe("1,204.50");
    expect(formatCell("2310", "zh")).toBe("2,310");
    expect(formatCell("North", "en")).toBe("North");
    expect(numericColumns([["North", "1204.5"], ["East", "2310"], ["West", ""]], 2)).toEqual([false, true]);
  });

  it("sorts numbers as numbers, blanks last, and keeps equal rows in order", () => {
    const rows = [["a", "10"], ["b", "9"], ["c", ""], ["d", "10"]];
    expect(sortRows(rows, 1, false, true).map((r) => r[0])).toEqual(["b", "a", "d", "c"]);
    expect(sortRows(rows, 1, true, true).map((r) => r[0])).toEqual(["a", "d", "b", "c"]);
    expect(sortRows([["x10"], ["x9"]], 0, false, false).map((r) => r[0])).toEqual(["x9", "x10"]);
  });

  it("copies as TSV with one line per row and one cell per tab", () => {
    expect(toTsv(["region", "net"], [["North\tEast", "1"], ["South\nWest", "2"]])).toBe("region\tnet\nNorth East\t1\nSouth West\t2");
  });
});
