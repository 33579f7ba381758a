//! Collecting a command's output under a cap, shared by the host and Docker sandboxes: whole in
//! memory up to the cap; past it, streamed to a file with only a head and a tail kept in memory,
//! and rendered as head + marker (naming the saved file, with a grep hint) + tail.

use std::path::{Path, PathBuf};

use tokio::io::{AsyncWriteExt, BufWriter};

use crate::host::HostLimits;
use crate::host::paths::Workspace;

/// Where output over the cap is streamed.
pub(crate) enum Spill {
    /// The host sandbox: a new file at this relative path inside the workspace (checked and its
    /// directory created only when the cap is passed).
    Workspace(Workspace, PathBuf),
    /// The Docker sandbox: a new file on the host (a temporary file), copied into the container
    /// afterwards by the caller.
    HostFile(PathBuf),
}

/// Collects output: whole in memory up to the cap; past it, streamed to a file with only a head
/// and a tail kept in memory.
pub(crate) struct OutputSink {
    cap: usize,
    head_len: usize,
    tail_len: usize,
    total: u64,
    /// The whole output while it fits under the cap.
    mem: Vec<u8>,
    /// Set once the output went over the cap.
    capped: Option<Capped>,
    /// Where the output goes once over the cap.
    spill: Spill,
}

struct Capped {
    head: Vec<u8>,
    tail: Vec<u8>,
    file: Option<BufWriter<tokio::fs::File>>,
    path: Option<PathBuf>,
    error: Option<String>,
}

impl Capped {
    async fn write(&mut self, bytes: &[u8]) {
        if let Some(file) = &mut self.file
            && let Err(e) = file.write_all(bytes).await
        {
            self.error = Some(format!("saving the output failed part way: {e}"));
            self.file = None;
        }
    }

    fn keep_tail(&mut self, bytes: &[u8], tail_len: usize) {
        if bytes.len() >= tail_len {
            self.tail.clear();
            self.tail
                .extend_from_slice(&bytes[bytes.len() - tail_len..]);
        } else {
            self.tail.extend_from_slice(bytes);
            if self.tail.len() > 2 * tail_len {
                let cut = self.tail.len() - tail_len;
                self.tail.drain(..cut);
            }
        }
    }
}

/// The output once the command is done, before it is rendered: the caller may still move the
/// saved file somewhere (the Docker sandbox copies it into the container).
pub(crate) struct Captured {
    total: u64,
    tail_len: usize,
    /// `None` when the output fit under the cap: then `mem` is all of it.
    capped: Option<Capped>,
    mem: Vec<u8>,
}

impl Captured {
    /// Where the whole output was saved, when it went over the cap and saving worked.
    pub(crate) fn saved_file(&self) -> Option<&Path> {
        self.capped
            .as_ref()
            .filter(|c| c.error.is_none())
            .and_then(|c| c.path.as_deref())
    }

    /// Records that the saved output could not be kept (the note then says it was not saved).
    pub(crate) fn set_save_error(&mut self, error: String) {
        if let Some(capped) = &mut self.capped {
            capped.error = Some(error);
            capped.path = None;
        }
    }

    /// Builds the output text: `(output, truncated, saved file)`. `shown` is the path named in
    /// the note and returned (e.g. the path inside a container); `None` = the file written.
    pub(crate) fn render(self, shown: Option<PathBuf>) -> (String, bool, Option<PathBuf>) {
        let Some(capped) = self.capped else {
            return (String::from_utf8_lossy(&self.mem).into_owned(), false, None);
        };
        let path = if capped.error.is_some() {
            None
        } else {
            shown.or(capped.path)
        };
        let head = utf8_head(&capped.head);
        let tail_start = capped.tail.len().saturating_sub(self.tail_len);
        let tail = utf8_tail(&capped.tail[tail_start..]);
        let omitted = self.total.saturating_sub((head.len() + tail.len()) as u64);
        let note = match (&path, &capped.error) {
            (Some(path), _) => format!(
                "output truncated: {omitted} bytes omitted here; full output ({} bytes) saved to {p}; grep it, e.g. `grep -n PATTERN {p}`",
                self.total,
                p = path.display()
            ),
            (None, Some(err)) => format!(
                "output truncated: {omitted} of {} bytes omitted and not saved ({err})",
                self.total
            ),
            (None, None) => format!(
                "output truncated: {omitted} of {} bytes omitted",
                self.total
            ),
        };
        let mut out = String::from_utf8_lossy(head).into_owned();
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("\n[... {note} ...]\n\n"));
        out.push_str(&String::from_utf8_lossy(tail));
        (out, true, path)
    }
}

impl OutputSink {
    /// A sink with the cap and preview sizes of `limits`.
    pub(crate) fn new(limits: &HostLimits, spill: Spill) -> Self {
        Self {
            cap: limits.output_cap,
            head_len: limits.preview_head.min(limits.output_cap),
            tail_len: limits.preview_tail.min(limits.output_cap),
            total: 0,
            mem: Vec::new(),
            capped: None,
            spill,
        }
    }

    /// Bytes pushed so far.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    async fn open_spill(&self) -> Result<(tokio::fs::File, PathBuf), String> {
        let path = match &self.spill {
            Spill::Workspace(ws, name) => ws
                .resolve_for_write(&name.to_string_lossy())
                .map_err(|why| why.message)?,
            Spill::HostFile(path) => path.clone(),
        };
        match tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .await
        {
            Ok(file) => Ok((file, path)),
            Err(e) => Err(format!("cannot save the output to {}: {e}", path.display())),
        }
    }

    /// Takes the next chunk of output.
    pub(crate) async fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if self.capped.is_none() {
            if self.mem.len() + chunk.len() <= self.cap {
                self.mem.extend_from_slice(chunk);
                return;
            }
            let mem = std::mem::take(&mut self.mem);
            let mut capped = Capped {
                head: mem[..mem.len().min(self.head_len)].to_vec(),
                tail: Vec::new(),
                file: None,
                path: None,
                error: None,
            };
            match self.open_spill().await {
                Ok((file, path)) => {
                    capped.file = Some(BufWriter::with_capacity(256 * 1024, file));
                    capped.path = Some(path);
                }
                Err(why) => capped.error = Some(why),
            }
            capped.write(&mem).await;
            capped.keep_tail(&mem, self.tail_len);
            self.capped = Some(capped);
        }
        if let Some(capped) = &mut self.capped {
            if capped.head.len() < self.head_len {
                let take = (self.head_len - capped.head.len()).min(chunk.len());
                capped.head.extend_from_slice(&chunk[..take]);
            }
            capped.write(chunk).await;
            capped.keep_tail(chunk, self.tail_len);
        }
    }

    /// Flushes the saved file, if any, and hands over what was collected.
    pub(crate) async fn capture(self) -> Captured {
        let mut capped = self.capped;
        if let Some(c) = &mut capped
            && let Some(file) = &mut c.file
            && let Err(e) = file.flush().await
        {
            c.error = Some(format!("saving the output failed at the end: {e}"));
        }
        if let Some(c) = &mut capped {
            // Close the file now: the caller may read or move it.
            c.file = None;
        }
        Captured {
            total: self.total,
            tail_len: self.tail_len,
            capped,
            mem: self.mem,
        }
    }

    /// Flushes the file and builds the output text: `(output, truncated, saved file)`.
    pub(crate) async fn finish(self) -> (String, bool, Option<PathBuf>) {
        self.capture().await.render(None)
    }
}

/// The head without a UTF-8 sequence cut at its end.
fn utf8_head(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    }
}

/// The tail without continuation bytes of a UTF-8 sequence cut at its start.
fn utf8_tail(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|&&b| (0x80..0xC0).contains(&b))
        .count();
    &bytes[skip..]
}
