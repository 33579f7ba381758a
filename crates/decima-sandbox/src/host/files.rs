//! `read_file` and `write_file` on the host.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

use super::HostLimits;
use super::paths::Workspace;
use crate::error::ToolError;

/// A `read_file` call. Lines are counted from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadFileRequest {
    /// Relative to the workspace (an absolute path inside it is accepted too).
    pub path: String,
    /// The first line to return, counting from 1. `None` = 1.
    pub offset: Option<usize>,
    /// How many lines at most. `None` = the default (2000); the byte cap applies as well.
    pub limit: Option<usize>,
}

/// What `read_file` returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContent {
    /// The path read, relative to the workspace.
    pub path: PathBuf,
    /// The text of the lines returned (invalid UTF-8 replaced), newlines kept.
    pub content: String,
    /// The number of the first line returned (1-based).
    pub first_line: usize,
    /// How many lines were returned.
    pub lines: usize,
    /// True when the file goes on past what was returned (line limit, byte cap) or a long line
    /// was cut.
    pub truncated: bool,
    /// A note for the model when something was left out: how to read on.
    pub note: Option<String>,
}

impl FileContent {
    /// The tool result text: the content, then the note if any.
    pub fn to_tool_text(&self) -> String {
        match &self.note {
            Some(note) => format!("{}\n[{note}]", self.content),
            None => self.content.clone(),
        }
    }
}

/// A `write_file` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteFileRequest {
    /// Relative to the workspace (an absolute path inside it is accepted too).
    pub path: String,
    /// The whole new content.
    pub content: String,
}

/// What `write_file` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    /// The file written, relative to the workspace.
    pub path: PathBuf,
    /// Bytes written.
    pub bytes: usize,
    /// True when the file did not exist before.
    pub created: bool,
}

impl WriteOutcome {
    /// The tool result text.
    pub fn to_tool_text(&self) -> String {
        let verb = if self.created { "created" } else { "overwrote" };
        format!("{verb} {} ({} bytes)", self.path.display(), self.bytes)
    }
}

/// Reads one line of at most `cap` bytes into `buf` (the rest of a longer line is skipped).
/// Returns `None` at end of file, else whether the line was cut.
fn read_line_capped(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut cut = false;
    let mut any = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(if any { Some(cut) } else { None });
        }
        any = true;
        let (line_part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..=i], true),
            None => (chunk, false),
        };
        let used = line_part.len();
        let room = cap.saturating_sub(buf.len());
        if line_part.len() > room {
            cut = true;
            buf.extend_from_slice(&line_part[..room]);
        } else {
            buf.extend_from_slice(line_part);
        }
        reader.consume(used);
        if done {
            if cut {
                buf.push(b'\n');
            }
            return Ok(Some(cut));
        }
    }
}

pub(crate) fn read(
    ws: &Workspace,
    req: &ReadFileRequest,
    limits: &HostLimits,
) -> Result<FileContent, ToolError> {
    let real = ws.resolve_existing(&req.path)?;
    let shown = ws.display_relative(&real);
    if real.is_dir() {
        return Err(ToolError::data(format!(
            "{} is a directory; use the shell tool (ls) to list it",
            req.path
        )));
    }
    let file = File::open(&real).map_err(|e| ToolError::io("open", &shown, &e))?;
    read_text(
        BufReader::with_capacity(64 * 1024, file),
        shown,
        req,
        limits,
    )
}

/// The lines `req` asks for from `reader`, under the line and byte caps of `limits`, with a
/// note on how to read on. `shown` is the path named in results and errors. Shared with the
/// Docker sandbox, which reads from a downloaded archive.
pub(crate) fn read_text(
    mut reader: impl BufRead,
    shown: PathBuf,
    req: &ReadFileRequest,
    limits: &HostLimits,
) -> Result<FileContent, ToolError> {
    let first_line = req.offset.unwrap_or(1).max(1);
    let limit = req.limit.unwrap_or(limits.read_default_lines).max(1);
    let mut content = String::new();
    let mut line = Vec::new();
    let mut number = 0usize;
    let mut lines = 0usize;
    let mut cut_lines = 0usize;
    let mut stopped_by = None;
    while let Some(cut) = read_line_capped(&mut reader, &mut line, limits.read_max_line_bytes)
        .map_err(|e| ToolError::io("read", &shown, &e))?
    {
        number += 1;
        if number < first_line {
            continue;
        }
        if lines >= limit {
            stopped_by = Some("line limit");
            break;
        }
        let text = String::from_utf8_lossy(&line);
        if content.len() + text.len() > limits.read_max_bytes {
            stopped_by = Some("byte cap");
            break;
        }
        if cut {
            cut_lines += 1;
        }
        content.push_str(&text);
        lines += 1;
    }
    let mut notes = Vec::new();
    if number < first_line && first_line > 1 {
        notes.push(format!(
            "the file has only {number} lines; offset {first_line} is past its end"
        ));
    }
    if let Some(why) = stopped_by {
        let next = first_line + lines;
        notes.push(match why {
            "line limit" => format!(
                "showing {lines} lines from line {first_line}; the file goes on: read on with offset={next}"
            ),
            _ => format!(
                "output capped at {} bytes after {lines} lines; read on with offset={next}",
                limits.read_max_bytes
            ),
        });
    }
    if cut_lines > 0 {
        notes.push(format!(
            "{cut_lines} line(s) longer than {} bytes were cut; use the shell tool to see them",
            limits.read_max_line_bytes
        ));
    }
    let truncated = stopped_by.is_some() || cut_lines > 0;
    Ok(FileContent {
        path: shown,
        content,
        first_line,
        lines,
        truncated,
        note: if notes.is_empty() {
            None
        } else {
            Some(notes.join("; "))
        },
    })
}

pub(crate) fn write(ws: &Workspace, req: &WriteFileRequest) -> Result<WriteOutcome, ToolError> {
    write_bytes(ws, &req.path, req.content.as_bytes())
}

/// Writes `bytes` to `path` inside the workspace atomically (a temporary file, then a rename).
pub(crate) fn write_bytes(
    ws: &Workspace,
    path: &str,
    bytes: &[u8],
) -> Result<WriteOutcome, ToolError> {
    let target = ws.resolve_for_write(path)?;
    let shown = ws.display_relative(&target);
    let created = !target.exists();
    super::file_transfer::write_beside(&target, &shown, |file| {
        file.write_all(bytes)
            .map(|()| bytes.len() as u64)
            .map_err(|e| ToolError::io("write", &shown, &e))
    })?;
    Ok(WriteOutcome {
        path: shown,
        bytes: bytes.len(),
        created,
    })
}
