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
const SOURCE_TYPES: [&str; 9] = [
    "md", "markdown", "html", "htm", "txt", "csv", "tsv", "json", "log",
];

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
    let cut = bytes.len() as u64 > MAX_FILE_BYTES;
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

/// The files a run wrote, read: the sources a command or tool wrote, and the reports the model
/// wrote, each with its text or why it was not read.
#[derive(Debug, Default)]
pub struct RunFiles {
    /// Files commands and tools wrote, with their text.
    pub sources: Vec<(WrittenFile, String)>,
    /// Files the model wrote itself.
    pub reports: Vec<(WrittenFile, FileText)>,
}

/// Reads the files `execution` wrote through `sandbox`. A source that cannot be read is left
/// out of the ledger (logged); a report keeps why.
pub async fn run_files(
    store: &Store,
    sandbox: &dyn Sandbox,
    execution: ExecutionId,
) -> Result<RunFiles> {
    let mut files = RunFiles::default();
    for file in written_by(store, execution).await? {
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
    Ok(files)
}
