//! History files kept up to date in the container: one archive per sync, and for large files
//! that only grew, their new bytes appended by one exec. A Docker engine call costs about as
//! much as an exec whatever it carries, so the number of calls is what this minimises.

use std::io;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use super::DockerSandbox;
use super::paths::{WORKSPACE, container_relative};
use super::transfer::{entry_stream, now_secs};
use crate::error::ToolError;

/// A workspace file kept up to date with a host file that only grows by appending (a history
/// export), for [`DockerSandbox::sync_appended`].
#[derive(Debug, Clone)]
pub struct AppendedFile {
    /// The file's name in the target directory.
    pub name: String,
    /// The host file.
    pub host: std::path::PathBuf,
    /// How many of its bytes the container's copy already holds (0: none, or not known).
    pub uploaded: u64,
}

/// Appends each large file's new bytes (`.append-NAME` beside it), then checks that file's
/// size; a file whose copy does not hold exactly what was expected is named on stdout, to be
/// uploaded whole. The directory was made real by the archive that carried the parts.
const SYNC_APPENDED: &str = r#"
dir=$1; shift
cd "$dir" || exit 3
while [ $# -ge 3 ]; do
    name=$1; had=$2; want=$3; shift 3
    if [ -f ".append-$name" ]; then
        if [ -f "$name" ] && [ ! -L "$name" ] && [ "$(wc -c < "$name")" -eq "$had" ]; then
            cat ".append-$name" >> "$name"
        fi
        rm -f ".append-$name"
    fi
    if [ ! -f "$name" ] || [ -L "$name" ] || [ "$(wc -c < "$name")" -ne "$want" ]; then
        echo "$name"
    fi
done
"#;

/// Files up to this size are sent whole on every sync (one archive, one engine call: Docker's
/// extraction costs about as much as an exec whatever the size); larger ones that only grew
/// send just their new bytes and take one exec to append them.
const WHOLE_UP_TO: u64 = 16 * 1024 * 1024;

impl DockerSandbox {
    /// Brings files of one workspace directory (`dir`, relative to `/workspace`) up to date with
    /// host files that only grow by appending (history exports). One archive, extracted into
    /// `/workspace`, carries the directory (made a real directory if the agent replaced it with
    /// a symlink: Docker's extraction replaces what is not a directory, and never writes through
    /// a link) and every file whole, except large files whose copy already holds a prefix: those
    /// get only their new bytes, which one exec appends after checking the copy's size; a copy
    /// that turns out to differ is sent whole. Returns each file's size as sent.
    pub async fn sync_appended(
        &self,
        dir: &str,
        files: &[AppendedFile],
    ) -> Result<Vec<u64>, ToolError> {
        let rel = container_relative(dir)?;
        if rel.is_empty() || rel.contains('/') {
            return Err(ToolError::data(format!(
                "{dir}: history files go in one folder directly under the workspace"
            )));
        }
        let mut sizes = Vec::with_capacity(files.len());
        for file in files {
            check_plain_name(&file.name)?;
            let size = tokio::fs::metadata(&file.host)
                .await
                .map_err(|e| ToolError::io("read", &file.host, &e))?
                .len();
            sizes.push(size);
        }
        let delta = |i: usize| {
            let f = &files[i];
            sizes[i] > WHOLE_UP_TO && f.uploaded > 0 && f.uploaded <= sizes[i]
        };
        let container = self.container().await?;
        let whole: Vec<usize> = (0..files.len()).filter(|&i| !delta(i)).collect();
        let parts: Vec<usize> = (0..files.len()).filter(|&i| delta(i)).collect();
        self.put_files(&container, &rel, files, &sizes, &whole, &parts)
            .await?;
        if !parts.is_empty() {
            let mut cmd: Vec<String> = vec![
                "sh".into(),
                "-c".into(),
                SYNC_APPENDED.into(),
                "decima-sync".into(),
                format!("{WORKSPACE}/{rel}"),
            ];
            for &i in &parts {
                cmd.extend([
                    files[i].name.clone(),
                    files[i].uploaded.to_string(),
                    sizes[i].to_string(),
                ]);
            }
            let (code, out, err) = self.helper(&container, "append to files", cmd).await?;
            let stale: Vec<usize> = if code == 0 {
                let named: Vec<&str> = out.lines().map(str::trim).collect();
                parts
                    .iter()
                    .copied()
                    .filter(|&i| named.contains(&files[i].name.as_str()))
                    .collect()
            } else {
                tracing::warn!(code, error = %err.trim(), "appending to history copies failed");
                parts.clone()
            };
            if !stale.is_empty() {
                self.put_files(&container, &rel, files, &sizes, &stale, &[])
                    .await?;
            }
        }
        Ok(sizes)
    }

    /// One archive extracted into `/workspace`: the directory `rel`, the files `whole` in full
    /// and, for `parts`, their bytes past `uploaded` as `.append-NAME`. Streamed: a 50 MB file
    /// is never held in memory.
    async fn put_files(
        &self,
        container: &str,
        rel: &str,
        files: &[AppendedFile],
        sizes: &[u64],
        whole: &[usize],
        parts: &[usize],
    ) -> Result<(), ToolError> {
        let (uid, gid) = self.config.uid_gid()?;
        let header = |name: &str, size: u64, dir: bool| {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(if dir {
                tar::EntryType::Directory
            } else {
                tar::EntryType::Regular
            });
            header.set_size(size);
            header.set_mode(if dir { 0o755 } else { 0o644 });
            header.set_uid(uid);
            header.set_gid(gid);
            header.set_mtime(now_secs());
            let mut builder = tar::Builder::new(Vec::new());
            builder
                .append_data(&mut header, name, io::empty())
                .map(|()| builder.get_ref().clone())
                .map_err(|e| ToolError::system(format!("cannot build the archive: {e}")))
        };
        type Entry = std::pin::Pin<Box<dyn Stream<Item = io::Result<Bytes>> + Send>>;
        let mut entries: Vec<Entry> = vec![Box::pin(futures_util::stream::once({
            let dir = header(&format!("{rel}/"), 0, true)?;
            async move { Ok(Bytes::from(dir)) }
        }))];
        let mut total = 0u64;
        for (&i, part) in whole
            .iter()
            .map(|i| (i, false))
            .chain(parts.iter().map(|i| (i, true)))
        {
            let file = &files[i];
            let mut host = tokio::fs::File::open(&file.host)
                .await
                .map_err(|e| ToolError::io("read", &file.host, &e))?;
            let (name, start) = if part {
                (format!("{rel}/.append-{}", file.name), file.uploaded)
            } else {
                (format!("{rel}/{}", file.name), 0)
            };
            if start > 0 {
                tokio::io::AsyncSeekExt::seek(&mut host, io::SeekFrom::Start(start))
                    .await
                    .map_err(|e| ToolError::io("read", &file.host, &e))?;
            }
            let size = sizes[i] - start;
            total += size;
            entries.push(Box::pin(entry_stream(
                header(&name, size, false)?,
                host,
                size,
            )));
        }
        entries.push(Box::pin(futures_util::stream::once(async {
            Ok(Bytes::from(vec![0u8; 1024]))
        })));
        let tar = futures_util::stream::iter(entries).flatten();
        self.put_archive(container, WORKSPACE, tar, total)
            .await
            .map_err(ToolError::from)
    }
}

/// A file name with no directory part, no leading dot and nothing a shell or tar would read
/// specially.
fn check_plain_name(name: &str) -> Result<(), ToolError> {
    let plain = !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
    if plain {
        Ok(())
    } else {
        Err(ToolError::data(format!(
            "{name:?} is not a plain file name"
        )))
    }
}
