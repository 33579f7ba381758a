/**
 * What the window does with a table an analyst reads: which columns hold numbers (to align
 * them right and write them with the language's separators), sorting that knows numbers from
 * text, and TSV, which pastes into Excel or LibreOffice as cells.
 */

/** A cell as a number, when it is one: "1,204.50", "-3", "12.5%" is not (it stays text). */
export function asNumber(cell: string): number | null {
  const t = cell.trim();
  if (!/^-?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$/.test(t)) return null;
  const n = Number(t.replace(/,/g, ""));
  return Number.isFinite(n) ? n : null;
}

/** Columns where most filled cells (and at least one) are numbers. */
export function numericColumns(rows: string[][], width: number): boolean[] {
  return Array.from({ length: width }, (_, c) => {
    const filled = rows.map((r) => r[c] ?? "").filter((v) => v.trim() !== "");
    if (filled.length === 0) return false;
    const numbers = filled.filter((v) => asNumber(v) !== null).length;
    return numbers / filled.length >= 0.8;
  });
}

/** A number cell written with the language's separators and its own decimals. */
export function formatCell(cell: string, lang: string): string {
  const n = asNumber(cell);
  if (n === null) return cell;
  const decimals = cell.trim().split(".")[1]?.length ?? 0;
  return new Intl.NumberFormat(lang === "zh" ? "zh-CN" : "en-US", {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  }).format(n);
}

/** Rows sorted by column `c`, numbers as numbers, blanks last; a stable sort. */
export function sortRows(rows: string[][], c: number, descending: boolean, numeric: boolean): string[][] {
  const key = (row: string[]) => row[c] ?? "";
  return rows
    .map((row, i) => ({ row, i }))
    .sort((a, b) => {
      const [x, y] = [key(a.row), key(b.row)];
      if (x.trim() === "" || y.trim() === "") return x.trim() === "" ? (y.trim() === "" ? a.i - b.i : 1) : -1;
      let order: number;
      if (numeric) order = (asNumber(x) ?? 0) - (asNumber(y) ?? 0);
      else order = x.localeCompare(y, undefined, { numeric: true, sensitivity: "base" });
      return (descending ? -order : order) || a.i - b.i;
    })
    .map(({ row }) => row);
}

/** A table as TSV: tabs and line breaks inside a cell become spaces, so each cell stays one. */
export function toTsv(columns: string[], rows: string[][]): string {
  const clean = (cell: string) => cell.replace(/[\t\r\n]+/g, " ");
  return [columns, ...rows].map((row) => row.map(clean).join("\t")).join("\n");
}

/** A table as CSV (RFC 4180): a cell with a comma, quote or line break is quoted, its quotes
 *  doubled; lines end with CRLF, as spreadsheets write them. */
export function toCsv(columns: string[], rows: string[][]): string {
  const cell = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);
  return [columns, ...rows].map((row) => row.map(cell).join(",")).join("\r\n") + "\r\n";
}
