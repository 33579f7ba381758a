//! The workspace files a run wrote, for the ledger and the check. A file a command or an MCP
//! tool wrote is a source: code computed it, so its figures may support an answer's. A file the
//! model wrote itself with `write_file` is a report: its figures are claims, matched against
//! the ledger as the answer's are, and never a source of their own. Which call wrote which file
//! is in the run's `workspace.changed` events; the files are read through the conversation's
//! sandbox, as the tools read them.

use std::collections::BTreeMap;

use decima_core::ExecutionId;
use decima_sandbox::Sandbox;
use decima_store::Store;
use serde::Serialize;

use crate::error::Result;
use crate::workspace::CHANGED_EVENT;

/// The most of one file that is read: a 50 MB CSV is indexed from its first 8 MiB, and the
/// check says so.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// The reports whose figures are matched, by extension: what the reader understands.
pub const REPORT_TYPES: [&str; 6] = ["md", "markdown", "html", "htm", "txt", "csv"];
/// Text a command may write that the ledger reads as a source, by extension.
const SOURCE_TYPES: [&str; 13] = [
    "md", "markdown", "html", "htm", "txt", "csv", "tsv", "json", "log", "xlsx", "xlsm", "xls",
    "ods",
];
/// Workbooks, read sheet by sheet into CSV text for the ledger.
const WORKBOOK_TYPES: [&str; 4] = ["xlsx", "xlsm", "xls", "ods"];
/// The most of a run's inputs read for one check, all files together: a workspace holding
/// gigabytes of data is indexed from its first files, and the rest are named in the log.
pub const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// A file the run wrote, by its last writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFile {
    /// Its workspace path.
    pub path: String,
    /// The tool that last wrote it.
    pub tool: String,
    /// That call's id.
    pub call_id: String,
    /// The seq of the answer that made the call.
    pub message_seq: i64,
}

impl WrittenFile {
    /// Whether the model wrote it itself: a report, not a source.
    #[must_use]
    pub fn is_report(&self) -> bool {
        self.tool == "write_file"
    }
}

/// A file as read for the check: its text, or why it was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileText {
    /// Its text; `cut` when only its first [`MAX_FILE_BYTES`] were read.
    Text { text: String, cut: bool },
    /// Not read, and why, in words a person can act on.
    Unread(String),
}

/// The files `execution` wrote, each by its last writer, in path order.
pub async fn written_by(store: &Store, execution: ExecutionId) -> Result<Vec<WrittenFile>> {
    let mut last: BTreeMap<String, WrittenFile> = BTreeMap::new();
    let mut after = 0;
    loop {
        let page = store
            .events()
            .execution_after(execution, after, 500)
            .await?;
        let Some(end) = page.last().map(|e| e.id) else {
            break;
        };
        for event in page.iter().filter(|e| e.kind == CHANGED_EVENT) {
            let p = &event.payload;
            let (Some(call_id), Some(tool), Some(files)) = (
                p["call_id"].as_str(),
                p["name"].as_str(),
                p["files"].as_array(),
            ) else {
                continue;
            };
            let message_seq = p["message_seq"].as_i64().unwrap_or(0);
            for path in files.iter().filter_map(|f| f["path"].as_str()) {
                last.insert(
                    path.to_owned(),
                    WrittenFile {
                        path: path.to_owned(),
                        tool: tool.to_owned(),
                        call_id: call_id.to_owned(),
                        message_seq,
                    },
                );
            }
        }
        after = end;
    }
    Ok(last.into_values().collect())
}

/// The extension of `path`, lower-cased.
fn extension(path: &str) -> String {
    std::path::Path::new(path)
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

/// Whether the ledger reads a command's file of this name as a source.
#[must_use]
pub fn is_source_type(path: &str) -> bool {
    SOURCE_TYPES.contains(&extension(path).as_str())
}

/// Reads a file the run wrote: a report in a format the matcher does not read is named as
/// such rather than passed; a file that is gone, binary or not UTF-8 says so.
pub async fn read(sandbox: &dyn Sandbox, path: &str, report: bool) -> FileText {
    let ext = extension(path);
    if report && !REPORT_TYPES.contains(&ext.as_str()) {
        return FileText::Unread(format!(
            "its figures were not checked: the matcher reads .md, .html, .txt and .csv reports, \
             not {}",
            if ext.is_empty() {
                "files without an extension".to_owned()
            } else {
                format!(".{ext}")
            }
        ));
    }
    let bytes = match sandbox.read_head(path.to_owned(), MAX_FILE_BYTES + 1).await {
        Ok(bytes) => bytes,
        Err(e) => return FileText::Unread(format!("it could not be read: {}", e.message)),
    };
    text_of(&ext, bytes)
}

/// A file's bytes (its first [`MAX_FILE_BYTES`], and one more when there is more) as the
/// ledger reads them: a workbook's sheets as CSV, HTML with its markup blanked, text as it is.
#[must_use]
pub fn text_of(ext: &str, bytes: Vec<u8>) -> FileText {
    let cut = bytes.len() as u64 > MAX_FILE_BYTES;
    if WORKBOOK_TYPES.contains(&ext) {
        if cut {
            return FileText::Unread(format!(
                "it is a workbook larger than {} MiB, which is not read for figures",
                MAX_FILE_BYTES / 1024 / 1024
            ));
        }
        return match workbook_text(bytes) {
            Ok((text, cut)) => FileText::Text { text, cut },
            Err(why) => FileText::Unread(why),
        };
    }
    let mut bytes = bytes;
    if cut {
        bytes.truncate(usize::try_from(MAX_FILE_BYTES).unwrap_or(usize::MAX));
        // A character cut in two at the limit is dropped, not an encoding error.
        while !bytes.is_empty() && std::str::from_utf8(&bytes).is_err() {
            let valid = std::str::from_utf8(&bytes).map_err(|e| e.valid_up_to());
            match valid {
                Err(n) if bytes.len() - n < 4 => bytes.truncate(n),
                _ => break,
            }
        }
    }
    match String::from_utf8(bytes) {
        Ok(text) if ext == "html" || ext == "htm" => FileText::Text {
            text: html_text(&text),
            cut,
        },
        Ok(text) => FileText::Text { text, cut },
        Err(e) => FileText::Unread(format!(
            "it is not UTF-8 text (invalid byte at {}), so its figures were not read",
            e.utf8_error().valid_up_to()
        )),
    }
}

/// A workbook's sheets as the ledger reads them: each sheet a line naming it, then its cells as
/// CSV, its first row the header. Dates are left out (a date's serial number is no figure), and
/// the text stops at [`MAX_FILE_BYTES`] (`true` then).
fn workbook_text(bytes: Vec<u8>) -> Result<(String, bool), String> {
    use calamine::{Data, Reader as _};
    let unreadable = |e: calamine::Error| {
        format!("it could not be read as a workbook ({e}), so its figures were not read")
    };
    let mut book =
        calamine::open_workbook_auto_from_rs(std::io::Cursor::new(bytes)).map_err(unreadable)?;
    let mut out = String::new();
    for name in book.sheet_names() {
        let range = book.worksheet_range(&name).map_err(unreadable)?;
        out.push_str("Sheet: ");
        out.push_str(&name);
        out.push_str("\n\n");
        let mut csv = csv::WriterBuilder::new().from_writer(Vec::new());
        for row in range.rows() {
            let cells = row.iter().map(|cell| match cell {
                Data::Int(i) => i.to_string(),
                Data::Float(f) => f.to_string(),
                Data::String(s) | Data::DurationIso(s) => s.clone(),
                Data::Bool(b) => b.to_string(),
                Data::DateTime(_) | Data::DateTimeIso(_) | Data::Error(_) | Data::Empty => {
                    String::new()
                }
            });
            csv.write_record(cells).map_err(|e| e.to_string())?;
            if out.len() + csv.get_ref().len() > MAX_FILE_BYTES as usize {
                break;
            }
        }
        let table = csv.into_inner().map_err(|e| e.to_string())?;
        out.push_str(&String::from_utf8_lossy(&table));
        out.push('\n');
        if out.len() as u64 >= MAX_FILE_BYTES {
            let end =
                out.floor_char_boundary(usize::try_from(MAX_FILE_BYTES).unwrap_or(usize::MAX));
            out.truncate(end);
            return Ok((out, true));
        }
    }
    Ok((out, false))
}

/// An HTML report's text with its markup blanked out, byte for byte, so that spans still point
/// into the file: tags, scripts and styles become spaces, and the common entities are read as
/// the spaces and signs they stand for.
#[must_use]
pub fn html_text(html: &str) -> String {
    let bytes = html.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let lower = html.to_ascii_lowercase();
    while i < bytes.len() {
        if bytes[i] == b'<' {
            let skip_to = ["<script", "<style"]
                .iter()
                .find(|t| lower[i..].starts_with(**t))
                .and_then(|t| lower[i..].find(&format!("</{}", &t[1..])).map(|k| i + k));
            let from = skip_to.unwrap_or(i);
            let end = lower[from..]
                .find('>')
                .map_or(bytes.len(), |k| from + k + 1);
            // Cells and lines keep their breaks, so a table stays a table.
            let tag = &lower[i..end.min(lower.len())];
            let fill =
                if tag.starts_with("</tr") || tag.starts_with("<br") || tag.starts_with("</p") {
                    b'\n'
                } else if tag.starts_with("</td") || tag.starts_with("</th") {
                    b'\t'
                } else {
                    b' '
                };
            out.extend(std::iter::repeat_n(b' ', end - i - 1));
            out.push(fill);
            i = end;
            continue;
        }
        if bytes[i] == b'&' {
            let entity = [
                ("&nbsp;", b' '),
                ("&amp;", b'&'),
                ("&#36;", b'$'),
                ("&dollar;", b'$'),
            ]
            .into_iter()
            .find(|(e, _)| lower[i..].starts_with(e));
            if let Some((e, c)) = entity {
                out.extend(std::iter::repeat_n(b' ', e.len() - 1));
                out.push(c);
                i += e.len();
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_default()
}

/// What the check made of one report the run wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportCheck {
    /// Its workspace path.
    pub path: String,
    /// Its figures, checked against the ledger (none when it was not read).
    pub figures: Vec<super::FigureCheck>,
    /// Why it was not read, or that only its beginning was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_keeps_its_text_where_it_was_and_its_table_as_a_table() {
        let html = "<html><style>td{}</style><table><tr><th>region</th><th>revenue</th></tr>\
                    <tr><td>North</td><td>1,234</td></tr></table><p>Total: &#36;1,234</p>";
        let text = html_text(html);
        assert_eq!(text.len(), html.len());
        let at = html.find("1,234").unwrap();
        assert_eq!(&text[at..at + 5], "1,234");
        assert!(text.contains("Total:     $1,234"), "{text:?}");
        assert!(!text.contains("td{}"));
        let header = text.lines().find(|l| l.contains("region")).unwrap();
        assert!(header.contains('\t'), "{text:?}");
        assert!(text.contains('$'));
    }

    #[tokio::test]
    async fn a_50_mb_csv_is_read_from_its_beginning_and_bad_text_is_named_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let row = "North,1234567,é\n";
        let big = row.repeat(50 * 1024 * 1024 / row.len() + 1);
        std::fs::write(dir.path().join("big.csv"), &big).unwrap();
        std::fs::write(
            dir.path().join("latin1.csv"),
            b"region,revenue\nK\xf6ln,1200\n",
        )
        .unwrap();
        let sandbox = decima_sandbox::HostSandbox::new(
            dir.path().to_path_buf(),
            decima_sandbox::HostLimits::default(),
        );
        match read(&sandbox, "big.csv", false).await {
            FileText::Text { text, cut } => {
                assert!(cut);
                assert!(text.len() as u64 <= MAX_FILE_BYTES);
                assert!(text.len() as u64 > MAX_FILE_BYTES - 4, "{}", text.len());
                assert!(big.starts_with(&text));
            }
            other => panic!("{other:?}"),
        }
        match read(&sandbox, "latin1.csv", true).await {
            FileText::Unread(why) => assert!(why.contains("not UTF-8"), "{why}"),
            other => panic!("{other:?}"),
        }
        match read(&sandbox, "gone.md", true).await {
            FileText::Unread(why) => assert!(why.contains("could not be read"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_text_formats_are_sources() {
        assert!(is_source_type("out/summary.CSV"));
        assert!(!is_source_type("chart.png"));
        assert!(!is_source_type("Makefile"));
    }
}

/// What a run's inputs are marked with in place of the tool that wrote them.
pub const INPUT: &str = "input";

/// The run's inputs: the text files and workbooks its workspace held when it started, read
/// from its first snapshot as they were then, except those it wrote (those are read as they
/// are now). Which inputs a command read cannot be seen from outside it, so every one is a
/// source, each as of `first_seq`, the run's first message. None without a snapshot.
pub async fn run_inputs(
    store: &Store,
    snapshots: std::sync::Arc<decima_sandbox::SnapshotStore>,
    execution: ExecutionId,
    written: &[WrittenFile],
    first_seq: i64,
) -> Result<Vec<(WrittenFile, String)>> {
    let Some(archive) = store
        .snapshots()
        .list(execution)
        .await?
        .into_iter()
        .find_map(|s| s.workspace_archive)
    else {
        return Ok(Vec::new());
    };
    let written: std::collections::HashSet<String> =
        written.iter().map(|f| f.path.clone()).collect();
    let read =
        tokio::task::spawn_blocking(move || inputs_of(&snapshots, &archive, &written, first_seq));
    match read.await.map_err(|e| e.to_string()).and_then(|r| r) {
        Ok(inputs) => Ok(inputs),
        Err(why) => {
            tracing::warn!(%execution, error = %why, "the run's inputs could not be read for its figures");
            Ok(Vec::new())
        }
    }
}

fn inputs_of(
    snapshots: &decima_sandbox::SnapshotStore,
    archive: &str,
    written: &std::collections::HashSet<String>,
    first_seq: i64,
) -> std::result::Result<Vec<(WrittenFile, String)>, String> {
    use decima_sandbox::snapshot::Entry;
    let id = decima_sandbox::SnapshotId::parse(archive).map_err(|e| e.to_string())?;
    let manifest = snapshots.manifest(&id).map_err(|e| e.to_string())?;
    let mut inputs = Vec::new();
    let mut budget = MAX_INPUT_BYTES;
    for entry in &manifest.entries {
        let Entry::File {
            path, hash, size, ..
        } = entry
        else {
            continue;
        };
        if written.contains(path) || !is_source_type(path) {
            continue;
        }
        // A file is read whole up to its own limit or not at all: one the budget cannot hold
        // is left out (a smaller one after it may still fit).
        let wanted = (*size).min(MAX_FILE_BYTES);
        if wanted > budget {
            tracing::info!(%path, "an input beyond the check's budget is not indexed");
            continue;
        }
        budget -= wanted;
        let bytes = match snapshots.object_head(hash, MAX_FILE_BYTES + 1) {
            Ok(bytes) => bytes,
            Err(e) => {
                tracing::warn!(%path, error = %e, "an input could not be read from the run's first snapshot");
                continue;
            }
        };
        match text_of(&extension(path), bytes) {
            FileText::Text { text, .. } => inputs.push((
                WrittenFile {
                    path: path.clone(),
                    tool: INPUT.to_owned(),
                    call_id: String::new(),
                    message_seq: first_seq,
                },
                text,
            )),
            FileText::Unread(why) => {
                tracing::debug!(%path, %why, "an input was not read for figures");
            }
        }
    }
    Ok(inputs)
}

/// The files a run wrote, read: the sources a command or tool wrote, and the reports the model
/// wrote, each with its text or why it was not read.
#[derive(Debug, Default)]
pub struct RunFiles {
    /// Files commands and tools wrote, with their text.
    pub sources: Vec<(WrittenFile, String)>,
    /// Files the model wrote itself.
    pub reports: Vec<(WrittenFile, FileText)>,
}

/// Reads the files a run wrote (`written_by`) through `sandbox`. A source that cannot be read
/// is left out of the ledger (logged); a report keeps why.
pub async fn run_files(sandbox: &dyn Sandbox, written: Vec<WrittenFile>) -> RunFiles {
    let mut files = RunFiles::default();
    for file in written {
        if file.is_report() {
            let text = read(sandbox, &file.path, true).await;
            files.reports.push((file, text));
        } else if is_source_type(&file.path) {
            match read(sandbox, &file.path, false).await {
                FileText::Text { text, .. } => files.sources.push((file, text)),
                FileText::Unread(why) => {
                    tracing::debug!(path = %file.path, %why, "a file the run wrote was not read");
                }
            }
        }
    }
    files
}
