//! One pipe that a command's stdout and stderr both write to, read without blocking the
//! runtime: interleaved in the order written, as a terminal shows them.

use std::io::{self, PipeReader, PipeWriter};

use crate::sys;

/// The read end of a command's output pipe. It ends (a read of 0 bytes) when every process
/// holding the write end is gone.
#[derive(Debug)]
pub struct OutputPipe {
    inner: sys::PipeRx,
}

impl OutputPipe {
    /// A new pipe: the reader, and the write end to give the command (clone it for stderr;
    /// drop every copy this process holds once the command has started, or no end comes).
    pub fn new() -> io::Result<(Self, PipeWriter)> {
        let (reader, writer): (PipeReader, PipeWriter) = std::io::pipe()?;
        Ok((
            Self {
                inner: sys::PipeRx::new(reader)?,
            },
            writer,
        ))
    }

    /// Reads what the command wrote next into `buf`; `Ok(0)` at the end.
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).await
    }
}
