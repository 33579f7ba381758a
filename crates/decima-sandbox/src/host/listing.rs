//! The files of a workspace, listed without reading them (what changed after a call, for the
//! window and for a chart a command saved), and one file read whole up to a cap.

use std::path::Path;

use super::paths::Workspace;
use crate::ToolError;

/// The most files a listing holds: a workspace past it is listed in part (the first found).
pub const MAX_LISTED: usize = 10_000;

/// Folders of the workspace that are Decima's own (capped output, saved results), not listed.
pub const OWN_FOLDERS: [&str; 1] = [".decima"];

/// One file of a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceFile {
    /// Relative to the workspace, `/`-separated.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it last changed, in seconds since the epoch (what `stat` gives in a container).
    pub modified: i64,
}

/// Lists the regular files under the workspace, never following a symlink, leaving out
/// [`OWN_FOLDERS`], at most [`MAX_LISTED`].
pub(crate) fn list(ws: &Workspace) -> Result<Vec<WorkspaceFile>, ToolError> {
    let root = ws.root();
    let mut out = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            // A folder removed or unreadable meanwhile is not the listing's failure.
            Err(_) if dir != root => continue,
            Err(e) => return Err(ToolError::io("list", Path::new("."), &e)),
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            let Ok(relative) = path.strip_prefix(root) else {
                continue;
            };
            let shown = relative.to_string_lossy().replace('\\', "/");
            if kind.is_dir() {
                if !OWN_FOLDERS.contains(&shown.as_str()) {
                    pending.push(path);
                }
            } else if kind.is_file()
                && let Ok(meta) = entry.metadata()
            {
                let modified = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
                out.push(WorkspaceFile {
                    path: shown,
                    size: meta.len(),
                    modified,
                });
                if out.len() >= MAX_LISTED {
                    return Ok(out);
                }
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Reads a file of the workspace whole, refusing one larger than `max` bytes before reading.
pub(crate) fn read_bytes(ws: &Workspace, path: &str, max: u64) -> Result<Vec<u8>, ToolError> {
    let real = ws.resolve_existing(path)?;
    let meta = std::fs::metadata(&real).map_err(|e| ToolError::io("read", Path::new(path), &e))?;
    if !meta.is_file() {
        return Err(ToolError::data(format!("{path} is not a regular file")));
    }
    if meta.len() > max {
        return Err(ToolError::data(format!(
            "{path} is {} bytes, more than the {max} read whole",
            meta.len()
        )));
    }
    std::fs::read(&real).map_err(|e| ToolError::io("read", Path::new(path), &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_files_below_the_workspace_but_not_decimas_own_or_through_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("out/charts")).unwrap();
        std::fs::create_dir_all(root.join(".decima/output")).unwrap();
        std::fs::write(root.join("data.csv"), "a,b\n1,2\n").unwrap();
        std::fs::write(root.join("out/charts/c.png"), [0u8; 10]).unwrap();
        std::fs::write(root.join(".decima/output/x.log"), "log").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "no").unwrap();
        let linked = link_dir(outside.path(), &root.join("link"));
        let ws = Workspace::open(root).unwrap();
        let listed = list(&ws).unwrap();
        let paths: Vec<(&str, u64)> = listed.iter().map(|f| (f.path.as_str(), f.size)).collect();
        assert_eq!(paths, [("data.csv", 8), ("out/charts/c.png", 10)]);
        assert!(listed.iter().all(|f| f.modified > 1_700_000_000));
        assert_eq!(read_bytes(&ws, "data.csv", 100).unwrap(), b"a,b\n1,2\n");
        assert!(
            read_bytes(&ws, "data.csv", 4)
                .unwrap_err()
                .message
                .contains("more than")
        );
        if linked {
            assert!(read_bytes(&ws, "link/secret", 100).is_err());
        }
    }

    /// Links `link` to the folder `target`; `false` where this account may not make symlinks
    /// (Windows without Developer Mode or the privilege), so the test checks what it can.
    #[cfg(unix)]
    fn link_dir(target: &Path, link: &Path) -> bool {
        std::os::unix::fs::symlink(target, link).unwrap();
        true
    }

    /// Links `link` to the folder `target`; `false` where this account may not make symlinks
    /// (Windows without Developer Mode or the privilege), so the test checks what it can.
    #[cfg(windows)]
    fn link_dir(target: &Path, link: &Path) -> bool {
        std::os::windows::fs::symlink_dir(target, link).is_ok()
    }
}
