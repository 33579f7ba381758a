//! What the workspace panel shows of a file, from at most a few MB of it: an image as itself,
//! CSV and XLSX as a table of their first rows, Markdown rendered, other text as text, and
//! anything else (or too large to show) as a reason, with "save as" offered instead.

use base64::Engine;
use serde::Serialize;
use specta::Type;

/// The most bytes read of an image or a workbook (formats read whole).
pub const WHOLE_BYTES: u64 = 4 * 1024 * 1024;
/// The most bytes read of a text or CSV file: its head.
pub const HEAD_BYTES: u64 = 512 * 1024;
/// The most rows a table shows.
const MAX_ROWS: usize = 200;
/// The most columns a table shows.
const MAX_COLUMNS: usize = 50;
/// The most characters a cell shows.
const MAX_CELL: usize = 300;

/// How a file is previewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An image the webview draws (`media_type`).
    Image(&'static str),
    /// Comma- (or tab-) separated values.
    Delimited(u8),
    /// An Excel workbook.
    Workbook,
    /// Markdown, rendered.
    Markdown,
    /// Anything else: text if it reads as UTF-8.
    Other,
}

impl Kind {
    /// By the file's extension.
    pub fn of(path: &str) -> Self {
        let ext = path
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "png" => Self::Image("image/png"),
            "jpg" | "jpeg" => Self::Image("image/jpeg"),
            "gif" => Self::Image("image/gif"),
            "webp" => Self::Image("image/webp"),
            "svg" => Self::Image("image/svg+xml"),
            "csv" => Self::Delimited(b','),
            "tsv" | "tab" => Self::Delimited(b'\t'),
            "xlsx" | "xlsm" | "xls" | "ods" => Self::Workbook,
            "md" | "markdown" => Self::Markdown,
            _ => Self::Other,
        }
    }

    /// Whether the format is read whole (and so refused past [`WHOLE_BYTES`]).
    pub fn read_whole(self) -> bool {
        matches!(self, Self::Image(_) | Self::Workbook)
    }
}

/// Why a file is not shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub enum PreviewGap {
    /// Larger than what a preview reads of such a file.
    TooLarge,
    /// Not text, and no format the panel draws.
    Binary,
    /// A table or a workbook that could not be read.
    Unreadable,
}

/// What the panel shows of a file.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum FilePreview {
    /// An image, as a data URL's parts.
    #[serde(rename_all = "camelCase")]
    Image {
        /// Its MIME type.
        media_type: String,
        /// Its bytes, base64.
        data: String,
    },
    /// The first rows of a table.
    #[serde(rename_all = "camelCase")]
    Table {
        /// The header row.
        columns: Vec<String>,
        /// The rows after it.
        rows: Vec<Vec<String>>,
        /// Whether the file holds more rows than shown (columns cut say so in `columns_total`).
        more: bool,
        /// How many columns its widest row has, when more than the table shows: a 10,000-column
        /// file says it shows the first 50.
        columns_total: Option<u32>,
        /// The sheet shown, for a workbook, and how many it has.
        sheet: Option<String>,
        /// The workbook's sheet count (1 for a CSV).
        sheets: u32,
    },
    /// Markdown, rendered by the panel.
    #[serde(rename_all = "camelCase")]
    Markdown {
        /// The text read.
        text: String,
        /// Whether the file goes on past it.
        truncated: bool,
    },
    /// Plain text.
    #[serde(rename_all = "camelCase")]
    Text {
        /// The text read.
        text: String,
        /// Whether the file goes on past it.
        truncated: bool,
    },
    /// Nothing shown, and why.
    #[serde(rename_all = "camelCase")]
    None {
        /// Why.
        reason: PreviewGap,
    },
}

/// The preview of a file from its first bytes, `whole` when they are all of it.
pub fn preview(kind: Kind, bytes: &[u8], whole: bool) -> FilePreview {
    match kind {
        Kind::Image(media_type) if whole => FilePreview::Image {
            media_type: media_type.to_owned(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        },
        Kind::Workbook if whole => workbook(bytes),
        Kind::Image(_) | Kind::Workbook => FilePreview::None {
            reason: PreviewGap::TooLarge,
        },
        Kind::Delimited(delimiter) => delimited(bytes, delimiter, whole),
        Kind::Markdown | Kind::Other => match text_of(bytes, whole) {
            Some(text) if kind == Kind::Markdown => FilePreview::Markdown {
                text,
                truncated: !whole,
            },
            Some(text) => FilePreview::Text {
                text,
                truncated: !whole,
            },
            None => FilePreview::None {
                reason: PreviewGap::Binary,
            },
        },
    }
}

/// The bytes as text, when they are UTF-8 (a character cut at the end of a head is dropped)
/// and hold no NUL.
fn text_of(bytes: &[u8], whole: bool) -> Option<String> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        // A head may end inside a character: what comes before it is the text.
        Err(e) if !whole && e.error_len().is_none() => {
            std::str::from_utf8(&bytes[..e.valid_up_to()]).ok()?
        }
        Err(_) => return None,
    };
    (!text.contains('\0')).then(|| text.to_owned())
}

/// The first rows of CSV or TSV. A head cut mid-row loses that row.
fn delimited(bytes: &[u8], delimiter: u8, whole: bool) -> FilePreview {
    let Some(text) = text_of(bytes, whole) else {
        return FilePreview::None {
            reason: PreviewGap::Binary,
        };
    };
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut records = Vec::new();
    let mut more = !whole;
    for record in reader.records() {
        let Ok(record) = record else {
            if records.is_empty() {
                return FilePreview::None {
                    reason: PreviewGap::Unreadable,
                };
            }
            break;
        };
        if records.len() > MAX_ROWS {
            more = true;
            break;
        }
        records.push(record.iter().map(cell).collect::<Vec<_>>());
    }
    // The last row of a head may be cut short.
    if !whole && records.len() > 1 {
        records.pop();
    }
    table(records, more, None, 1)
}

/// The first sheet of a workbook.
fn workbook(bytes: &[u8]) -> FilePreview {
    let unreadable = FilePreview::None {
        reason: PreviewGap::Unreadable,
    };
    let Ok(mut book) = calamine::open_workbook_auto_from_rs(std::io::Cursor::new(bytes)) else {
        return unreadable;
    };
    use calamine::Reader;
    let names = book.sheet_names();
    let Some(first) = names.first().cloned() else {
        return unreadable;
    };
    let Ok(range) = book.worksheet_range(&first) else {
        return unreadable;
    };
    let mut more = false;
    let mut records = Vec::new();
    for row in range.rows() {
        if records.len() > MAX_ROWS {
            more = true;
            break;
        }
        records.push(row.iter().map(|c| cell(&c.to_string())).collect());
    }
    table(
        records,
        more,
        Some(first),
        u32::try_from(names.len()).unwrap_or(u32::MAX),
    )
}

/// A table from rows, the first as its header, each cut to [`MAX_COLUMNS`].
fn table(
    mut records: Vec<Vec<String>>,
    more: bool,
    sheet: Option<String>,
    sheets: u32,
) -> FilePreview {
    let widest = records.iter().map(Vec::len).max().unwrap_or(0);
    for row in &mut records {
        row.truncate(MAX_COLUMNS);
    }
    let columns_total = (widest > MAX_COLUMNS).then(|| u32::try_from(widest).unwrap_or(u32::MAX));
    let columns = if records.is_empty() {
        Vec::new()
    } else {
        records.remove(0)
    };
    FilePreview::Table {
        columns,
        rows: records,
        more,
        columns_total,
        sheet,
        sheets,
    }
}

/// A cell as shown: at most [`MAX_CELL`] characters.
fn cell(value: &str) -> String {
    if value.chars().count() <= MAX_CELL {
        return value.to_owned();
    }
    let mut cut: String = value.chars().take(MAX_CELL).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_extension_whatever_its_case() {
        assert_eq!(Kind::of("out/Chart.PNG"), Kind::Image("image/png"));
        assert_eq!(Kind::of("a.svg"), Kind::Image("image/svg+xml"));
        assert_eq!(Kind::of("q3.csv"), Kind::Delimited(b','));
        assert_eq!(Kind::of("book.xlsx"), Kind::Workbook);
        assert_eq!(Kind::of("NOTES.md"), Kind::Markdown);
        assert_eq!(Kind::of("Makefile"), Kind::Other);
        assert!(Kind::Workbook.read_whole() && !Kind::Markdown.read_whole());
    }

    #[test]
    fn a_csv_shows_its_header_and_rows_quoted_fields_included() {
        let csv = "region,\"net, EUR\"\nNorth,\"1,200.50\"\nSouth,800\n";
        let FilePreview::Table {
            columns,
            rows,
            more,
            ..
        } = preview(Kind::Delimited(b','), csv.as_bytes(), true)
        else {
            panic!("not a table");
        };
        assert_eq!(columns, ["region", "net, EUR"]);
        assert_eq!(rows, [vec!["North", "1,200.50"], vec!["South", "800"]]);
        assert!(!more);
    }

    #[test]
    fn the_head_of_a_large_csv_drops_its_cut_row_and_says_there_is_more() {
        let mut csv = String::from("id,value\n");
        for i in 0..50 {
            csv.push_str(&format!("{i},ünïcode-{i}\n"));
        }
        // Cut inside the last row, and inside a two-byte character.
        let cut = csv.find("ünïcode-49").unwrap() + 1;
        let FilePreview::Table { rows, more, .. } =
            preview(Kind::Delimited(b','), &csv.as_bytes()[..cut], false)
        else {
            panic!("not a table");
        };
        assert!(more);
        assert_eq!(rows.len(), 49);
        assert_eq!(rows[48], ["48", "ünïcode-48"]);
    }

    #[test]
    fn past_two_hundred_rows_a_table_says_there_is_more() {
        let csv: String = (0..500).map(|i| format!("{i}\n")).collect();
        let FilePreview::Table { rows, more, .. } =
            preview(Kind::Delimited(b','), csv.as_bytes(), true)
        else {
            panic!("not a table");
        };
        assert_eq!(rows.len(), MAX_ROWS);
        assert!(more);
    }

    #[test]
    fn a_ten_thousand_column_csv_shows_fifty_and_says_how_many_there_are() {
        let header: Vec<String> = (0..10_000).map(|i| format!("c{i}")).collect();
        let row: Vec<String> = (0..10_000).map(|i| i.to_string()).collect();
        let csv = format!(
            "{}\n{}\n{}\n",
            header.join(","),
            row.join(","),
            row.join(",")
        );
        let FilePreview::Table {
            columns,
            rows,
            more,
            columns_total,
            ..
        } = preview(Kind::Delimited(b','), csv.as_bytes(), true)
        else {
            panic!("not a table")
        };
        assert_eq!(columns.len(), MAX_COLUMNS);
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.len() == MAX_COLUMNS));
        assert!(!more, "every row is shown");
        assert_eq!(columns_total, Some(10_000));
    }

    #[test]
    fn binary_large_and_broken_files_say_why_they_are_not_shown() {
        let png = [0x89, b'P', b'N', b'G', 0, 0];
        assert_eq!(
            preview(Kind::Image("image/png"), &png, false),
            FilePreview::None {
                reason: PreviewGap::TooLarge
            }
        );
        assert_eq!(
            preview(Kind::Other, &png, true),
            FilePreview::None {
                reason: PreviewGap::Binary
            }
        );
        assert_eq!(
            preview(Kind::Workbook, b"not a zip", true),
            FilePreview::None {
                reason: PreviewGap::Unreadable
            }
        );
        assert!(matches!(
            preview(Kind::Image("image/png"), &png, true),
            FilePreview::Image { ref media_type, .. } if media_type == "image/png"
        ));
        assert_eq!(
            preview(Kind::Markdown, "# Q3\n".as_bytes(), false),
            FilePreview::Markdown {
                text: "# Q3\n".into(),
                truncated: true
            }
        );
    }

    /// A workbook as Excel writes one: two sheets, shared strings and numbers.
    fn xlsx() -> Vec<u8> {
        use std::io::Write;
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default();
        let files = [
            (
                "[Content_Types].xml",
                r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/worksheets/sheet2.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>"#,
            ),
            (
                "_rels/.rels",
                r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#,
            ),
            (
                "xl/workbook.xml",
                r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Q3 sales" sheetId="1" r:id="rId1"/><sheet name="Notes" sheetId="2" r:id="rId2"/></sheets></workbook>"#,
            ),
            (
                "xl/_rels/workbook.xml.rels",
                r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet2.xml"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>"#,
            ),
            (
                "xl/sharedStrings.xml",
                r#"<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="4" uniqueCount="4"><si><t>region</t></si><si><t>net EUR</t></si><si><t>North</t></si><si><t>华南</t></si></sst>"#,
            ),
            (
                "xl/worksheets/sheet1.xml",
                r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row><row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><v>1200.5</v></c></row><row r="3"><c r="A3" t="s"><v>3</v></c><c r="B3"><v>800</v></c></row></sheetData></worksheet>"#,
            ),
            (
                "xl/worksheets/sheet2.xml",
                r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData/></worksheet>"#,
            ),
        ];
        for (name, body) in files {
            zip.start_file(name, options).unwrap();
            zip.write_all(body.as_bytes()).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    #[test]
    fn a_workbook_shows_its_first_sheet_and_says_how_many_it_has() {
        let bytes = xlsx();
        let shown = preview(Kind::Workbook, &bytes, true);
        assert_eq!(
            shown,
            FilePreview::Table {
                columns: vec!["region".into(), "net EUR".into()],
                rows: vec![
                    vec!["North".into(), "1200.5".into()],
                    vec!["华南".into(), "800".into()],
                ],
                more: false,
                columns_total: None,
                sheet: Some("Q3 sales".into()),
                sheets: 2,
            }
        );
    }
}
