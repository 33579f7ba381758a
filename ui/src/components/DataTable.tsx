import { useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { formatCell, numericColumns, sortRows, toCsv, toTsv } from "../lib/table";
import { CopyButton } from "./CopyButton";
import { SaveCsvButton } from "./SaveCsvButton";

type Props = {
  columns: string[];
  rows: string[][];
  /** The file holds more rows than these. */
  more: boolean;
  /** The name Save as CSV proposes (the file's, for a preview). */
  name?: string;
};

/**
 * A table an analyst reads: numbers right-aligned with the language's separators, the row
 * count, sorting by a column (numbers as numbers), a filter, and Copy as TSV, which pastes into
 * a spreadsheet as cells.
 */
export function DataTable({ columns, rows, more, name = "table" }: Props) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? "en";
  const [sort, setSort] = useState<{ column: number; descending: boolean } | null>(null);
  const [filter, setFilter] = useState("");
  const numeric = useMemo(() => numericColumns(rows, columns.length), [rows, columns.length]);
  const shown = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    const kept = needle === "" ? rows : rows.filter((row) => row.some((cell) => cell.toLowerCase().includes(needle)));
    return sort ? sortRows(kept, sort.column, sort.descending, numeric[sort.column] ?? false) : kept;
  }, [rows, filter, sort, numeric]);
  const sortBy = (column: number) =>
    setSort((now) => (now?.column === column ? (now.descending ? null : { column, descending: true }) : { column, descending: false }));

  return (
    <>
      <div className="data-table-tools">
        <span className="muted" data-testid="table-count">
          {more ? t("table.firstRows", { count: rows.length }) : t("table.rows", { count: rows.length })}
          {shown.length !== rows.length && ` · ${t("table.matching", { count: shown.length })}`}
        </span>
        <input
          type="search"
          className="text-input data-table-filter"
          data-testid="table-filter"
          aria-label={t("table.filter")}
          placeholder={t("table.filter")}
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
        />
        <CopyButton text={() => toTsv(columns, shown)} testId="table-copy-tsv" label={t("table.copyTsv")} />
        <SaveCsvButton csv={() => toCsv(columns, shown)} name={name} />
      </div>
      <table className="workspace-table" data-testid="workspace-preview-table">
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th
                key={i}
                scope="col"
                className={numeric[i] ? "numeric" : undefined}
                aria-sort={sort?.column === i ? (sort.descending ? "descending" : "ascending") : "none"}
              >
                <button type="button" className="data-table-sort" data-testid="table-sort" onClick={() => sortBy(i)}>
                  {c}
                  <span aria-hidden="true">{sort?.column === i ? (sort.descending ? " ▼" : " ▲") : ""}</span>
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {shown.map((row, r) => (
            <tr key={r}>
              {row.map((cell, i) => (
                <td key={i} className={numeric[i] ? "numeric" : undefined}>
                  {numeric[i] ? formatCell(cell, lang) : cell}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
