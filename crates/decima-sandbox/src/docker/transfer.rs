//! Moving files in and out of the container as tar archives (never through argv: Linux caps
//! one argument at 128 KiB). Uploads are streamed (a file is never held in memory whole), with
//! the sandbox user's uid and gid in the tar headers so the engine creates them owned by it.
//! Downloads are streamed to a host temporary file, each read under its own timeout.

use std::io::{self, BufReader};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use bollard::query_parameters::{
    DownloadFromContainerOptionsBuilder, UploadToContainerOptionsBuilder,
};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::DockerSandbox;
use super::exec::TempFile;
use super::paths::{
    RESOLVE_READ, RESOLVE_WRITE, WORKSPACE, container_relative, inside_workspace, split_answer,
};
use crate::error::{SandboxError, ToolError};
use crate::host::files::read_text;
use crate::host::{FileContent, ReadFileRequest, WriteFileRequest, WriteOutcome};

/// How long one read of a download stream may take before the engine counts as gone.
const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Chunk size for streamed uploads.
const CHUNK: usize = 256 * 1024;

/// The tar header block(s) of one regular file (a GNU long-name block first when the name
/// needs it).
fn file_header(name: &str, size: u64, mode: u32, uid: u64, gid: u64) -> io::Result<Vec<u8>> {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(size);
    header.set_mode(mode);
    header.set_uid(uid);
    header.set_gid(gid);
    header.set_mtime(now_secs());
    let mut builder = tar::Builder::new(Vec::new());
    // No data yet: only the header blocks are written (the file's bytes are streamed after).
    builder.append_data(&mut header, name, io::empty())?;
    Ok(builder.get_ref().clone())
}

pub(super) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

enum Part<R> {
    Header(Vec<u8>, R),
    Body(R, u64, u64),
    Trailer(u64),
    Done,
}

/// A tar archive of one file, streamed: the header, exactly `size` bytes from `reader` (fewer
/// is an error), the padding and the end-of-archive blocks.
fn one_file_tar<R>(header: Vec<u8>, reader: R, size: u64) -> impl Stream<Item = io::Result<Bytes>>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    entry_stream(header, reader, size).chain(futures_util::stream::once(async {
        Ok(Bytes::from(vec![0u8; 1024]))
    }))
}

/// One entry of a tar archive, streamed: its header, exactly `size` bytes from `reader` (fewer
/// is an error) and the padding to the next 512-byte block.
pub(super) fn entry_stream<R>(
    header: Vec<u8>,
    reader: R,
    size: u64,
) -> impl Stream<Item = io::Result<Bytes>>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    futures_util::stream::unfold(Part::Header(header, reader), move |part| async move {
        match part {
            Part::Header(bytes, reader) => {
                Some((Ok(Bytes::from(bytes)), Part::Body(reader, size, size)))
            }
            Part::Body(mut reader, left, total) => {
                if left == 0 {
                    return Some((Ok(Bytes::new()), Part::Trailer(total)));
                }
                let want = usize::try_from(left).unwrap_or(CHUNK).min(CHUNK);
                let mut buf = vec![0u8; want];
                match reader.read(&mut buf).await {
                    Ok(0) => Some((
                        Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            format!("the source ended {left} bytes short of {total}"),
                        )),
                        Part::Done,
                    )),
                    Ok(n) => {
                        buf.truncate(n);
                        Some((
                            Ok(Bytes::from(buf)),
                            Part::Body(reader, left - n as u64, total),
                        ))
                    }
                    Err(e) => Some((Err(e), Part::Done)),
                }
            }
            Part::Trailer(total) => {
                let pad = (512 - total % 512) % 512;
                let trailer = vec![0u8; usize::try_from(pad).unwrap_or(0)];
                Some((Ok(Bytes::from(trailer)), Part::Done))
            }
            Part::Done => None,
        }
    })
}

/// A streamed file on the host, chunk by chunk.
fn file_stream(file: tokio::fs::File) -> impl Stream<Item = io::Result<Bytes>> {
    futures_util::stream::unfold(Some(file), |file| async move {
        let mut file = file?;
        let mut buf = vec![0u8; CHUNK];
        match file.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(Bytes::from(buf)), Some(file)))
            }
            Err(e) => Some((Err(e), None)),
        }
    })
}

/// A timeout for an upload of `size` bytes: 30 s plus a second per 20 MB.
fn upload_timeout(size: u64) -> Duration {
    Duration::from_secs(30 + size / (20 * 1024 * 1024))
}

impl DockerSandbox {
    /// Uploads a tar stream into directory `dir` of the container.
    pub(super) async fn put_archive(
        &self,
        container: &str,
        dir: &str,
        tar: impl Stream<Item = io::Result<Bytes>> + Send + 'static,
        size_hint: u64,
    ) -> Result<(), SandboxError> {
        let options = UploadToContainerOptionsBuilder::new().path(dir).build();
        let docker = self.engine.client();
        match tokio::time::timeout(
            upload_timeout(size_hint),
            docker.upload_to_container(container, Some(options), bollard::body_try_stream(tar)),
        )
        .await
        {
            Err(_) => Err(SandboxError::DockerUnavailable {
                detail: "no answer in time while uploading a file".to_owned(),
            }),
            Ok(Err(e)) => Err(super::engine::engine_error("upload a file", e)),
            Ok(Ok(())) => Ok(()),
        }
    }

    /// Streams one file (exactly `size` bytes from `reader`) into the container as `dir/name`,
    /// owned by the sandbox user, with `mode`. `dir` must exist.
    pub(super) async fn put_file<R>(
        &self,
        container: &str,
        dir: &str,
        name: &str,
        reader: R,
        size: u64,
        mode: u32,
    ) -> Result<(), SandboxError>
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        let (uid, gid) = self.config.uid_gid()?;
        let header = file_header(name, size, mode, uid, gid).map_err(|e| SandboxError::Docker {
            action: "upload a file".to_owned(),
            message: format!("cannot build the archive header for {name}: {e}"),
        })?;
        self.put_archive(container, dir, one_file_tar(header, reader, size), size)
            .await
    }

    /// Downloads `path` from the container as a tar archive into a host temporary file.
    pub(super) async fn get_archive(
        &self,
        container: &str,
        path: &str,
    ) -> Result<TempFile, SandboxError> {
        let tmp = TempFile(std::env::temp_dir().join(format!(
            "decima-docker-download-{}.tar",
            uuid::Uuid::now_v7().simple()
        )));
        let io_err = |e: io::Error| SandboxError::Io {
            action: "write",
            path: tmp.0.display().to_string(),
            source: e,
        };
        let mut file = tokio::fs::File::create(&tmp.0).await.map_err(io_err)?;
        let options = DownloadFromContainerOptionsBuilder::new()
            .path(path)
            .build();
        let mut stream = self
            .engine
            .client()
            .download_from_container(container, Some(options));
        loop {
            let next = tokio::time::timeout(READ_TIMEOUT, stream.next())
                .await
                .map_err(|_| SandboxError::DockerUnavailable {
                    detail: format!(
                        "no data for {} s while downloading from the container",
                        READ_TIMEOUT.as_secs()
                    ),
                })?;
            match next {
                None => break,
                Some(Ok(chunk)) => file.write_all(&chunk).await.map_err(io_err)?,
                Some(Err(e)) => {
                    return Err(super::engine::engine_error(
                        "download from the container",
                        e,
                    ));
                }
            }
        }
        file.flush().await.map_err(io_err)?;
        Ok(tmp)
    }

    /// Resolves a tool path for reading, inside the container: `(shown relative path, real
    /// path)`, refused when it is missing, not a regular file or leads outside the workspace.
    pub(super) async fn resolve_read(
        &self,
        container: &str,
        raw: &str,
    ) -> Result<(String, String), ToolError> {
        let rel = container_relative(raw)?;
        let full = if rel.is_empty() {
            WORKSPACE.to_owned()
        } else {
            format!("{WORKSPACE}/{rel}")
        };
        let (code, out, err) = self
            .helper(
                container,
                "resolve a path",
                vec![
                    "sh".into(),
                    "-c".into(),
                    RESOLVE_READ.into(),
                    "decima-resolve".into(),
                    full,
                ],
            )
            .await?;
        if code != 0 {
            return Err(ToolError::system(format!(
                "cannot resolve {raw} in the container: {}",
                err.trim()
            )));
        }
        let (kind, real) = split_answer(&out);
        match kind {
            "missing" => Err(ToolError::data(format!("no such file or directory: {raw}"))),
            _ if !inside_workspace(real) => Err(ToolError::outside_workspace(format!(
                "{raw} resolves to {real}, outside the workspace (through a symlink)"
            ))),
            "dir" => Err(ToolError::data(format!(
                "{raw} is a directory; use the shell tool (ls) to list it"
            ))),
            "file" => Ok((rel, real.to_owned())),
            _ => Err(ToolError::data(format!("{raw} is not a regular file"))),
        }
    }

    /// Resolves a tool path for writing, inside the container, creating missing parent
    /// directories: `(shown relative path, real directory, file name, created)`.
    pub(super) async fn resolve_write(
        &self,
        container: &str,
        raw: &str,
    ) -> Result<(String, String, String, bool), ToolError> {
        let rel = container_relative(raw)?;
        if rel.is_empty() {
            return Err(ToolError::data(format!(
                "{raw} names the workspace itself, not a file"
            )));
        }
        let (code, out, err) = self
            .helper(
                container,
                "resolve a path",
                vec![
                    "sh".into(),
                    "-c".into(),
                    RESOLVE_WRITE.into(),
                    "decima-resolve".into(),
                    format!("{WORKSPACE}/{rel}"),
                ],
            )
            .await?;
        if code != 0 {
            let err = err.trim();
            let message = format!("cannot create the directories for {raw}: {err}");
            return Err(
                if err.contains("ermission denied") || err.contains("Read-only") {
                    ToolError::permission(message)
                } else {
                    ToolError::data(message)
                },
            );
        }
        let (kind, real) = split_answer(&out);
        let created = match kind {
            "new" => true,
            "exists" => false,
            "outside" => {
                return Err(ToolError::outside_workspace(format!(
                    "{raw}: {real} leads outside the workspace (through a symlink)"
                )));
            }
            "notdir" => {
                return Err(ToolError::data(format!("{raw}: {real} is not a directory")));
            }
            "dir" => return Err(ToolError::data(format!("{raw} is a directory"))),
            other => {
                return Err(ToolError::system(format!(
                    "unexpected answer resolving {raw}: {other}"
                )));
            }
        };
        if !inside_workspace(real) {
            return Err(ToolError::outside_workspace(format!(
                "{raw} resolves to {real}, outside the workspace"
            )));
        }
        let (dir, name) = real.rsplit_once('/').unwrap_or((WORKSPACE, real));
        Ok((rel, dir.to_owned(), name.to_owned(), created))
    }

    /// `read_file` in the container: resolve, download, read the lines asked for.
    pub(crate) async fn read_file_impl(
        &self,
        req: &ReadFileRequest,
    ) -> Result<FileContent, ToolError> {
        let container = self.container().await?;
        let (rel, real) = self.resolve_read(&container, &req.path).await?;
        let tar = self.get_archive(&container, &real).await?;
        let limits = self.limits.clone();
        let req = req.clone();
        tokio::task::spawn_blocking(move || {
            let file = std::fs::File::open(&tar.0)
                .map_err(|e| ToolError::system(format!("cannot open the download: {e}")))?;
            let mut archive = tar::Archive::new(file);
            let bad = |e: io::Error| ToolError::system(format!("a damaged download: {e}"));
            let mut entries = archive.entries().map_err(bad)?;
            let entry = entries
                .next()
                .ok_or_else(|| ToolError::data(format!("no such file: {}", req.path)))?
                .map_err(bad)?;
            if !entry.header().entry_type().is_file() {
                return Err(ToolError::outside_workspace(format!(
                    "{} changed while being read (it is no longer a regular file)",
                    req.path
                )));
            }
            let reader = BufReader::with_capacity(64 * 1024, entry);
            read_text(reader, PathBuf::from(&rel), &req, &limits)
        })
        .await
        .map_err(|e| ToolError::system(format!("read_file task failed: {e}")))?
    }

    /// `write_file` in the container: resolve (creating parents), upload as a tar archive.
    /// The file is replaced in place by the engine (not a rename on the same filesystem).
    pub(crate) async fn write_file_impl(
        &self,
        req: &WriteFileRequest,
    ) -> Result<WriteOutcome, ToolError> {
        self.write_bytes_impl(&req.path, req.content.as_bytes().to_vec())
            .await
    }

    /// Writes `bytes` to `path` in the workspace, as `write_file` writes text.
    pub(crate) async fn write_bytes_impl(
        &self,
        path: &str,
        bytes: Vec<u8>,
    ) -> Result<WriteOutcome, ToolError> {
        let container = self.container().await?;
        let (rel, dir, name, created) = self.resolve_write(&container, path).await?;
        let size = bytes.len();
        self.put_file(
            &container,
            &dir,
            &name,
            io::Cursor::new(bytes),
            size as u64,
            0o644,
        )
        .await?;
        Ok(WriteOutcome {
            path: PathBuf::from(rel),
            bytes: size,
            created,
        })
    }

    /// Uploads a file into the workspace from a reader giving exactly `size` bytes (streamed:
    /// a 50 MB history export is never held in memory whole). `path` is relative to
    /// `/workspace` or absolute under it; parent directories are created; symlinks leading out
    /// are refused. Returns the real path written inside the container.
    pub async fn upload_file<R>(
        &self,
        path: &str,
        reader: R,
        size: u64,
    ) -> Result<String, ToolError>
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        let container = self.container().await?;
        let (_, dir, name, _) = self.resolve_write(&container, path).await?;
        tracing::debug!(container = %container, bytes = size, "uploading a file to the sandbox");
        self.put_file(&container, &dir, &name, reader, size, 0o644)
            .await?;
        Ok(format!("{dir}/{name}"))
    }

    /// Uploads bytes as a file into the workspace (see [`DockerSandbox::upload_file`]).
    pub async fn upload_bytes(&self, path: &str, bytes: Vec<u8>) -> Result<String, ToolError> {
        let size = bytes.len() as u64;
        self.upload_file(path, io::Cursor::new(bytes), size).await
    }

    /// Downloads a regular file of the workspace whole. `path` as for `read_file`.
    pub async fn download_file(&self, path: &str) -> Result<Vec<u8>, ToolError> {
        self.with_downloaded_file(path, |entry| {
            let mut bytes = Vec::new();
            io::Read::read_to_end(entry, &mut bytes)
                .map_err(|e| ToolError::system(format!("a damaged download: {e}")))?;
            Ok(bytes)
        })
        .await
    }

    /// Downloads a regular file of the workspace as the engine's archive and hands its one
    /// entry to `read`, off the async threads: the file is streamed from the archive, never
    /// held whole unless `read` does.
    pub(super) async fn with_downloaded_file<T, F>(
        &self,
        path: &str,
        read: F,
    ) -> Result<T, ToolError>
    where
        T: Send + 'static,
        F: FnOnce(&mut tar::Entry<'_, std::fs::File>) -> Result<T, ToolError> + Send + 'static,
    {
        let container = self.container().await?;
        let (_, real) = self.resolve_read(&container, path).await?;
        let tar = self.get_archive(&container, &real).await?;
        tokio::task::spawn_blocking(move || {
            let file = std::fs::File::open(&tar.0)
                .map_err(|e| ToolError::system(format!("cannot open the download: {e}")))?;
            let mut archive = tar::Archive::new(file);
            let bad = |e: io::Error| ToolError::system(format!("a damaged download: {e}"));
            let mut entries = archive.entries().map_err(bad)?;
            let mut entry = entries
                .next()
                .ok_or_else(|| ToolError::data("the download is empty"))?
                .map_err(bad)?;
            if !entry.header().entry_type().is_file() {
                return Err(ToolError::data("not a regular file"));
            }
            read(&mut entry)
        })
        .await
        .map_err(|e| ToolError::system(format!("download task failed: {e}")))?
    }

    /// Copies a host file into the container at `target` (an absolute path under
    /// `/workspace`), creating its directory. Used to save capped shell output.
    pub(crate) async fn upload_host_file(
        &self,
        host: &Path,
        target: &str,
    ) -> Result<(), ToolError> {
        let file = tokio::fs::File::open(host)
            .await
            .map_err(|e| ToolError::io("open", host, &e))?;
        let size = file
            .metadata()
            .await
            .map_err(|e| ToolError::io("inspect", host, &e))?
            .len();
        self.upload_file(target, file, size).await.map(|_| ())
    }

    /// Replaces the contents of `into` (a host directory, created if missing) with the
    /// container's `/workspace`: for snapshots taken on a host mirror. Files, directories and
    /// symlinks are copied (symlinks as links, never followed); modes and mtimes kept,
    /// ownership not.
    pub async fn download_workspace(&self, into: &Path) -> Result<(), SandboxError> {
        let container = self.container().await?;
        let tar = self.get_archive(&container, WORKSPACE).await?;
        let into = into.to_path_buf();
        tokio::task::spawn_blocking(move || unpack_workspace(&tar.0, &into))
            .await
            .map_err(|e| SandboxError::Docker {
                action: "unpack the workspace".to_owned(),
                message: format!("the task failed: {e}"),
            })?
    }

    /// Replaces the contents of the container's `/workspace` with the contents of `from` (a
    /// host directory): for rolling back to a snapshot restored on a host mirror. Files end up
    /// owned by the sandbox user. `/workspace` is emptied first as the sandbox user, after
    /// making everything in it writable (`chmod -R u+rwX`).
    pub async fn upload_workspace(&self, from: &Path) -> Result<(), SandboxError> {
        let container = self.container().await?;
        let (uid, gid) = self.config.uid_gid()?;
        let from = from.to_path_buf();
        let tar = TempFile(std::env::temp_dir().join(format!(
            "decima-docker-upload-{}.tar",
            uuid::Uuid::now_v7().simple()
        )));
        let tar_path = tar.0.clone();
        tokio::task::spawn_blocking(move || pack_dir(&from, &tar_path, uid, gid))
            .await
            .map_err(|e| SandboxError::Docker {
                action: "pack the workspace".to_owned(),
                message: format!("the task failed: {e}"),
            })??;
        let (code, _, err) = self
            .helper(
                &container,
                "empty the workspace",
                vec![
                    "sh".into(),
                    "-c".into(),
                    "cd /workspace && chmod -R u+rwX . 2>/dev/null; for f in * .[!.]* ..?*; do if [ -e \"$f\" ] || [ -L \"$f\" ]; then rm -rf -- \"$f\" || exit 1; fi; done".into(),
                ],
            )
            .await?;
        if code != 0 {
            return Err(SandboxError::Docker {
                action: "empty the workspace".to_owned(),
                message: err.trim().to_owned(),
            });
        }
        let file = tokio::fs::File::open(&tar.0)
            .await
            .map_err(|e| SandboxError::Io {
                action: "read",
                path: tar.0.display().to_string(),
                source: e,
            })?;
        let size = file.metadata().await.map(|m| m.len()).unwrap_or(0);
        self.put_archive(&container, WORKSPACE, file_stream(file), size)
            .await
    }
}

/// Unpacks a download of `/workspace` (entries `workspace/...`) into `into`, after emptying it.
/// Entries with `..` or absolute names, and entries below a symlink, are refused.
fn unpack_workspace(tar_path: &Path, into: &Path) -> Result<(), SandboxError> {
    let io_err = |action: &'static str, path: &Path| {
        let path = path.display().to_string();
        move |e: io::Error| SandboxError::Io {
            action,
            path: path.clone(),
            source: e,
        }
    };
    std::fs::create_dir_all(into).map_err(io_err("create", into))?;
    for entry in std::fs::read_dir(into).map_err(io_err("list", into))? {
        let path = entry.map_err(io_err("list", into))?.path();
        let md = std::fs::symlink_metadata(&path).map_err(io_err("inspect", &path))?;
        if md.is_dir() {
            std::fs::remove_dir_all(&path).map_err(io_err("remove", &path))?;
        } else {
            std::fs::remove_file(&path).map_err(io_err("remove", &path))?;
        }
    }
    let file = std::fs::File::open(tar_path).map_err(io_err("read", tar_path))?;
    let mut archive = tar::Archive::new(file);
    let damaged = |e: io::Error| SandboxError::Docker {
        action: "download the workspace".to_owned(),
        message: format!("a damaged archive: {e}"),
    };
    for entry in archive.entries().map_err(damaged)? {
        let mut entry = entry.map_err(damaged)?;
        let name = entry.path().map_err(damaged)?.into_owned();
        let mut parts = name.components();
        // The first component is the directory itself (`workspace`).
        parts.next();
        let mut rel = PathBuf::new();
        for part in parts {
            match part {
                Component::Normal(p) => rel.push(p),
                Component::CurDir => {}
                _ => {
                    return Err(SandboxError::Docker {
                        action: "download the workspace".to_owned(),
                        message: format!("refused an archive entry {}", name.display()),
                    });
                }
            }
        }
        if rel.as_os_str().is_empty() {
            continue;
        }
        // Never write through a symlink unpacked earlier.
        let mut ancestor = into.to_path_buf();
        if let Some(parent) = rel.parent() {
            for part in parent.components() {
                ancestor.push(part);
                if std::fs::symlink_metadata(&ancestor).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(SandboxError::Docker {
                        action: "download the workspace".to_owned(),
                        message: format!("refused {} below a symlink", name.display()),
                    });
                }
            }
        }
        let target = into.join(&rel);
        entry.unpack(&target).map_err(io_err("write", &target))?;
    }
    Ok(())
}

/// Packs the contents of `from` into a tar at `tar_path` with relative names, owned by
/// `uid:gid`. Files, directories and symlinks (as links); other kinds are skipped.
fn pack_dir(from: &Path, tar_path: &Path, uid: u64, gid: u64) -> Result<(), SandboxError> {
    let io_err = |action: &'static str, path: &Path| {
        let path = path.display().to_string();
        move |e: io::Error| SandboxError::Io {
            action,
            path: path.clone(),
            source: e,
        }
    };
    let out = std::fs::File::create(tar_path).map_err(io_err("create", tar_path))?;
    let mut builder = tar::Builder::new(io::BufWriter::new(out));
    builder.follow_symlinks(false);
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = from.join(&rel);
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .map_err(io_err("list", &dir))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(io_err("list", &dir))?
            .into_iter()
            .map(|e| e.file_name())
            .collect();
        names.sort();
        for name in names {
            let rel_path = rel.join(&name);
            let path = from.join(&rel_path);
            let md = std::fs::symlink_metadata(&path).map_err(io_err("inspect", &path))?;
            let mut header = tar::Header::new_gnu();
            header.set_metadata_in_mode(&md, tar::HeaderMode::Complete);
            header.set_uid(uid);
            header.set_gid(gid);
            let ft = md.file_type();
            if ft.is_dir() {
                header.set_size(0);
                builder
                    .append_data(&mut header, &rel_path, io::empty())
                    .map_err(io_err("pack", &path))?;
                stack.push(rel_path);
            } else if ft.is_symlink() {
                let target = std::fs::read_link(&path).map_err(io_err("read", &path))?;
                header.set_size(0);
                builder
                    .append_link(&mut header, &rel_path, &target)
                    .map_err(io_err("pack", &path))?;
            } else if ft.is_file() {
                let file = std::fs::File::open(&path).map_err(io_err("read", &path))?;
                builder
                    .append_data(&mut header, &rel_path, file)
                    .map_err(io_err("pack", &path))?;
            }
        }
    }
    builder
        .into_inner()
        .and_then(|mut w| io::Write::flush(&mut w))
        .map_err(io_err("write", tar_path))?;
    Ok(())
}
