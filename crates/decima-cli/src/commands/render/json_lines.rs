//! `--json`: every event as one line of JSON on stdout.

use std::io::Write as _;
use std::sync::Mutex;

use decima_runtime::Event;

use crate::error::CliError;

/// `--json`: every event as one line of JSON on stdout, flushed at once. Printing errors are
/// kept for the end: the run must not be torn down halfway because a reader went away.
#[derive(Default)]
pub(crate) struct JsonLines {
    stdout_failed: Mutex<Option<std::io::Error>>,
}

impl JsonLines {
    pub(crate) fn emit(&self, event: Event) {
        let Ok(mut failed) = self.stdout_failed.lock() else {
            return;
        };
        if failed.is_some() {
            return;
        }
        let written = serde_json::to_string(&event)
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push('\n');
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(line.as_bytes())?;
                stdout.flush()
            });
        if let Err(e) = written {
            *failed = Some(e);
        }
    }

    pub(crate) fn finish(&self) -> Result<(), CliError> {
        match self.stdout_failed.lock() {
            Ok(mut failed) => failed.take().map_or(Ok(()), |e| Err(CliError::Output(e))),
            Err(_) => Ok(()),
        }
    }
}
