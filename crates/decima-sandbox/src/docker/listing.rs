//! The files of a container's workspace, listed by one exec of `find` and `stat` (both in
//! busybox and in Debian), without downloading them.

use std::time::{Duration, Instant};

use super::DockerSandbox;
use super::exec::{ExecSpec, Stdout};
use crate::ToolError;
use crate::host::listing::{MAX_LISTED, WorkspaceFile};

/// Lists the workspace's regular files as `SIZE MTIME ./PATH` lines, leaving out Decima's own
/// folders (`.decima`, and `context` where subagents' histories are copied), at most
/// [`MAX_LISTED`].
const LIST: &str = "cd /workspace && find . \\( -path ./.decima -o -path ./context \\) -prune \
    -o -type f -exec stat -c '%s %Y %n' {} + 2>/dev/null | head -n 10000";

/// Enough for [`MAX_LISTED`] lines of long paths.
const LIST_BYTES: usize = 4 * 1024 * 1024;

impl DockerSandbox {
    /// The workspace's files, by one exec in the container.
    pub(crate) async fn list_files_impl(&self) -> Result<Vec<WorkspaceFile>, ToolError> {
        let container = self.container().await?;
        let mut out = Vec::new();
        self.run_exec(
            &container,
            ExecSpec {
                cmd: vec!["sh".into(), "-c".into(), LIST.into()],
                user: &self.config.user,
            },
            Instant::now() + Duration::from_secs(30),
            Stdout::Buf(&mut out, LIST_BYTES),
        )
        .await?;
        let mut files: Vec<WorkspaceFile> = String::from_utf8_lossy(&out)
            .lines()
            .filter_map(parse)
            .take(MAX_LISTED)
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }
}

/// One `SIZE MTIME ./PATH` line (a path may hold spaces; one holding a newline is lost).
fn parse(line: &str) -> Option<WorkspaceFile> {
    let mut parts = line.splitn(3, ' ');
    let size = parts.next()?.parse().ok()?;
    let modified = parts.next()?.parse().ok()?;
    let path = parts.next()?.strip_prefix("./")?.to_owned();
    Some(WorkspaceFile {
        path,
        size,
        modified,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_become_files_and_anything_else_is_skipped() {
        assert_eq!(
            parse("2048 1795741980 ./out/q3 chart.png"),
            Some(WorkspaceFile {
                path: "out/q3 chart.png".into(),
                size: 2048,
                modified: 1_795_741_980,
            })
        );
        assert_eq!(parse("stat: cannot stat"), None);
        assert_eq!(parse("12 34 /etc/passwd"), None);
    }
}
