//! Files crossing between the container's workspace and the host, for the window: the head of
//! a file for a preview (by `head -c` in the container, so a 2 GB file is never sent whole), a
//! file saved out where the analyst chose (streamed through the engine's archive), and a file
//! the analyst dropped copied in (streamed, never over a file already there).

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::DockerSandbox;
use super::exec::{ExecSpec, Stdout};
use crate::ToolError;
use crate::host::WriteOutcome;
use crate::host::file_transfer::write_beside;

/// The most a head read returns, whatever is asked: what an exec's buffer holds.
const MAX_HEAD: u64 = 16 * 1024 * 1024;

impl DockerSandbox {
    /// Up to `max` bytes from the start of a regular file of the workspace.
    pub(crate) async fn read_head_impl(&self, path: &str, max: u64) -> Result<Vec<u8>, ToolError> {
        let container = self.container().await?;
        let (_, real) = self.resolve_read(&container, path).await?;
        let max = max.min(MAX_HEAD);
        let mut out = Vec::new();
        let end = self
            .run_exec(
                &container,
                ExecSpec {
                    cmd: vec![
                        "sh".into(),
                        "-c".into(),
                        "[ -f \"$1\" ] || { echo 'not a regular file' >&2; exit 3; }; \
                         head -c \"$2\" -- \"$1\""
                            .into(),
                        "decima-head".into(),
                        real,
                        max.to_string(),
                    ],
                    user: &self.config.user,
                },
                Instant::now() + Duration::from_secs(30),
                Stdout::Buf(&mut out, usize::try_from(max).unwrap_or(usize::MAX)),
            )
            .await?;
        if end.exit_code != Some(0) {
            let err = String::from_utf8_lossy(&end.stderr);
            return Err(ToolError::data(format!(
                "cannot read {path}: {}",
                err.trim()
            )));
        }
        Ok(out)
    }

    /// Copies a regular file of the workspace to the host path `to`, streamed.
    pub(crate) async fn copy_out_impl(&self, path: &str, to: &Path) -> Result<u64, ToolError> {
        let to = to.to_path_buf();
        self.with_downloaded_file(path, move |entry| {
            write_beside(&to, &to, |file| {
                io::copy(entry, file).map_err(|e| ToolError::io("copy", &to, &e))
            })
        })
        .await
    }

    /// Copies the host file `from` into the workspace as `path`, refused when a file is there.
    pub(crate) async fn copy_in_impl(
        &self,
        from: &Path,
        path: &str,
    ) -> Result<WriteOutcome, ToolError> {
        let file = tokio::fs::File::open(from)
            .await
            .map_err(|e| ToolError::io("open", from, &e))?;
        let meta = file
            .metadata()
            .await
            .map_err(|e| ToolError::io("inspect", from, &e))?;
        if !meta.is_file() {
            return Err(ToolError::data(format!(
                "{} is not a regular file",
                from.display()
            )));
        }
        let container = self.container().await?;
        let (_, dir, name, created) = self.resolve_write(&container, path).await?;
        if !created {
            return Err(ToolError::data(format!(
                "{path} is already in the workspace; nothing was replaced"
            )));
        }
        self.put_file(&container, &dir, &name, file, meta.len(), 0o644)
            .await?;
        Ok(WriteOutcome {
            path: PathBuf::from(path),
            bytes: usize::try_from(meta.len()).unwrap_or(usize::MAX),
            created: true,
        })
    }
}
