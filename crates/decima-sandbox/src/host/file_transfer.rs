//! Files crossing between the workspace and the rest of the host: the head of a file for a
//! preview (a 2 GB file is never read whole), a file saved out where the analyst chose, and a
//! file the analyst dropped copied in. Every workspace path is checked as the tools' are.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::Path;

use super::WriteOutcome;
use super::paths::Workspace;
use crate::ToolError;

/// Up to `max` bytes from the start of a regular file of the workspace.
pub(crate) fn read_head(ws: &Workspace, path: &str, max: u64) -> Result<Vec<u8>, ToolError> {
    let real = ws.resolve_existing(path)?;
    let file =
        std::fs::File::open(&real).map_err(|e| ToolError::io("open", Path::new(path), &e))?;
    let meta = file
        .metadata()
        .map_err(|e| ToolError::io("inspect", Path::new(path), &e))?;
    if !meta.is_file() {
        return Err(ToolError::data(format!("{path} is not a regular file")));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(max)).unwrap_or(0));
    file.take(max)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io("read", Path::new(path), &e))?;
    Ok(bytes)
}

/// Copies a regular file of the workspace to `to` (a host path outside the checks: the
/// analyst picked it), through a temporary file beside it so a failed copy leaves nothing
/// half-written. Returns the bytes copied.
pub(crate) fn copy_out(ws: &Workspace, path: &str, to: &Path) -> Result<u64, ToolError> {
    let real = ws.resolve_existing(path)?;
    if !real.is_file() {
        return Err(ToolError::data(format!("{path} is not a regular file")));
    }
    let mut source =
        std::fs::File::open(&real).map_err(|e| ToolError::io("open", Path::new(path), &e))?;
    write_beside(to, to, |file| {
        std::io::copy(&mut source, file).map_err(|e| ToolError::io("copy", Path::new(path), &e))
    })
}

/// Copies the host file `from` into the workspace as `path`, never over a file already there.
pub(crate) fn copy_in(ws: &Workspace, from: &Path, path: &str) -> Result<WriteOutcome, ToolError> {
    let target = ws.resolve_for_write(path)?;
    let shown = ws.display_relative(&target);
    let mut source = std::fs::File::open(from).map_err(|e| ToolError::io("open", from, &e))?;
    let meta = source
        .metadata()
        .map_err(|e| ToolError::io("inspect", from, &e))?;
    if !meta.is_file() {
        return Err(ToolError::data(format!(
            "{} is not a regular file",
            from.display()
        )));
    }
    // create_new: never replaces, nor follows, anything already there.
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&target)
        .map_err(|e| ToolError::io("create", &shown, &e))?;
    let copied = std::io::copy(&mut source, &mut file)
        .and_then(|n| file.sync_all().map(|()| n))
        .map_err(|e| ToolError::io("copy", &shown, &e));
    let bytes = match copied {
        Ok(n) => n,
        Err(e) => {
            drop(file);
            let _ = std::fs::remove_file(&target);
            return Err(e);
        }
    };
    Ok(WriteOutcome {
        path: shown,
        bytes: usize::try_from(bytes).unwrap_or(usize::MAX),
        created: true,
    })
}

/// Writes `to` through a temporary file in its folder (created new: never one followed or
/// reused), synced and renamed over it once `fill` succeeded; nothing is left on failure.
/// Errors name the file as `shown`.
pub(crate) fn write_beside(
    to: &Path,
    shown: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> Result<u64, ToolError>,
) -> Result<u64, ToolError> {
    let (Some(dir), Some(name)) = (to.parent(), to.file_name()) else {
        return Err(ToolError::data(format!(
            "{} is not a file path",
            shown.display()
        )));
    };
    let tmp = dir.join(format!(
        ".{}.{}.part",
        name.to_string_lossy(),
        uuid::Uuid::now_v7().simple()
    ));
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| ToolError::io("create", shown, &e))?;
        let n = fill(&mut file)?;
        file.flush()
            .and_then(|()| file.sync_all())
            .map_err(|e| ToolError::io("write", shown, &e))?;
        std::fs::rename(&tmp, to).map_err(|e| ToolError::io("replace", shown, &e))?;
        Ok(n)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_copies_out_and_in_stay_inside_and_never_replace() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        std::fs::write(dir.path().join("big.csv"), "a,b\n".repeat(1000)).unwrap();
        assert_eq!(read_head(&ws, "big.csv", 6).unwrap(), b"a,b\na,");
        assert!(read_head(&ws, "../etc/passwd", 6).is_err());

        let out = tempfile::tempdir().unwrap();
        let to = out.path().join("copy.csv");
        assert_eq!(copy_out(&ws, "big.csv", &to).unwrap(), 4000);
        assert_eq!(std::fs::read(&to).unwrap(), "a,b\n".repeat(1000).as_bytes());
        // Nothing but the file is left beside it.
        assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 1);
        assert!(copy_out(&ws, "missing.csv", &to).is_err());

        let dropped = out.path().join("dropped.csv");
        std::fs::write(&dropped, "x,y\n1,2\n").unwrap();
        let written = copy_in(&ws, &dropped, "inbox/dropped.csv").unwrap();
        assert_eq!(written.bytes, 8);
        assert_eq!(
            std::fs::read(dir.path().join("inbox/dropped.csv")).unwrap(),
            b"x,y\n1,2\n"
        );
        let again = copy_in(&ws, &dropped, "big.csv").unwrap_err();
        assert!(again.message.contains("big.csv"), "{}", again.message);
        assert_eq!(
            std::fs::read(dir.path().join("big.csv")).unwrap().len(),
            4000
        );
        assert!(copy_in(&ws, out.path(), "folder").is_err());
    }
}
