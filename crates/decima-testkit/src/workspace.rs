//! Workspaces for agent tests: one seeded with what a rollback must put back (nested folders, a
//! binary file, a file the task deletes), and a byte-for-byte listing to compare a workspace
//! before and after.

use std::io;
use std::path::Path;

/// Writes nested folders (`a/b/c/deep.txt`), a 70 KB binary file (`keep.bin`, every byte value)
/// and `doomed.txt`, the file a test's task deletes.
pub fn seed(ws: &Path) -> io::Result<()> {
    std::fs::create_dir_all(ws.join("a/b/c"))?;
    std::fs::write(ws.join("a/b/c/deep.txt"), "deep\n")?;
    std::fs::write(
        ws.join("keep.bin"),
        (0u8..=255).cycle().take(70_000).collect::<Vec<u8>>(),
    )?;
    std::fs::write(ws.join("doomed.txt"), "do not lose me")
}

/// Every file and folder under `ws` with its bytes, sorted, `.decima` (the sandbox's own
/// output files) left out. Folders end with `/` and have no bytes.
pub fn tree(ws: &Path) -> io::Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut stack = vec![ws.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let rel = path
                .strip_prefix(ws)
                .map_err(io::Error::other)?
                .to_string_lossy()
                .into_owned();
            if rel.starts_with(".decima") {
                continue;
            }
            if path.is_dir() {
                out.push((format!("{rel}/"), Vec::new()));
                stack.push(path);
            } else {
                out.push((rel, std::fs::read(&path)?));
            }
        }
    }
    out.sort();
    Ok(out)
}
