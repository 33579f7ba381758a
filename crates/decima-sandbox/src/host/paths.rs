//! Keeping every path inside the workspace.

mod real;

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use crate::error::ToolError;
use real::{canonical, relative_to};

/// An existing workspace directory, canonicalised (in the plain form on Windows, see `real`).
#[derive(Debug, Clone)]
pub(crate) struct Workspace {
    /// The workspace as given (for messages and `HOME`).
    given: PathBuf,
    /// The workspace with symlinks resolved: every resolved path must be below it.
    root: PathBuf,
}

impl Workspace {
    /// Checks the workspace still exists and is a directory (else a `System` error).
    pub(crate) fn open(given: &Path) -> Result<Self, ToolError> {
        let gone = |why: String| {
            ToolError::system(format!("the workspace {} is gone: {why}", given.display()))
        };
        let root = canonical(given).map_err(|e| gone(e.to_string()))?;
        if !root.is_dir() {
            return Err(gone("it is not a directory".to_owned()));
        }
        Ok(Self {
            given: given.to_path_buf(),
            root,
        })
    }

    /// The workspace with symlinks resolved.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Turns a path from a tool call into a clean relative path, lexically: refuses empty
    /// paths, NUL bytes, `..` and absolute paths outside the workspace. `.` parts are dropped.
    pub(crate) fn relative(&self, raw: &str) -> Result<PathBuf, ToolError> {
        lexically_relative(
            raw,
            &[&self.root, &self.given],
            &self.root.display().to_string(),
        )
    }

    /// Resolves an existing path (file or directory) inside the workspace, following symlinks
    /// only while they stay inside it.
    pub(crate) fn resolve_existing(&self, raw: &str) -> Result<PathBuf, ToolError> {
        let rel = self.relative(raw)?;
        let joined = self.root.join(&rel);
        let real = canonical(&joined).map_err(|e| match e.kind() {
            ErrorKind::NotFound => ToolError::data(format!("no such file or directory: {raw}")),
            _ => ToolError::io("resolve", &rel, &e),
        })?;
        self.check_inside(raw, &real)?;
        Ok(real)
    }

    /// Resolves a path to write: every existing parent must be a directory inside the workspace
    /// (a symlinked parent that leads out is refused), missing parents are created (inside the
    /// workspace only, after the check), and an existing final symlink is followed only if it
    /// stays inside. Returns the real path to write.
    pub(crate) fn resolve_for_write(&self, raw: &str) -> Result<PathBuf, ToolError> {
        let rel = self.relative(raw)?;
        let Some(name) = rel.file_name().map(ToOwned::to_owned) else {
            return Err(ToolError::data(format!(
                "{raw} names the workspace itself, not a file"
            )));
        };
        // Pass 1: check every existing parent before creating anything.
        let parents: Vec<_> = rel
            .parent()
            .map(|p| p.components().collect())
            .unwrap_or_default();
        let mut dir = self.root.clone();
        let mut missing_from = None;
        for (i, part) in parents.iter().enumerate() {
            let next = dir.join(part);
            match std::fs::symlink_metadata(&next) {
                Ok(md) if md.file_type().is_symlink() => {
                    let real = canonical(&next).map_err(|_| {
                        ToolError::outside_workspace(format!(
                            "{raw}: {} is a symlink that does not resolve inside the workspace",
                            next.strip_prefix(&self.root).unwrap_or(&next).display()
                        ))
                    })?;
                    self.check_inside(raw, &real)?;
                    if !real.is_dir() {
                        return Err(ToolError::data(format!(
                            "{raw}: {} is not a directory",
                            part.as_os_str().to_string_lossy()
                        )));
                    }
                    dir = real;
                }
                Ok(md) if md.is_dir() => dir = next,
                Ok(_) => {
                    return Err(ToolError::data(format!(
                        "{raw}: {} is not a directory",
                        part.as_os_str().to_string_lossy()
                    )));
                }
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    missing_from = Some(i);
                    break;
                }
                Err(e) => return Err(ToolError::io("inspect", &next, &e)),
            }
        }
        // Pass 2: create what is missing, as real directories under a checked one.
        if let Some(start) = missing_from {
            for part in &parents[start..] {
                dir.push(part);
                match std::fs::create_dir(&dir) {
                    Ok(()) => {}
                    Err(e) if e.kind() == ErrorKind::AlreadyExists && dir.is_dir() => {
                        let real =
                            canonical(&dir).map_err(|e| ToolError::io("resolve", &dir, &e))?;
                        self.check_inside(raw, &real)?;
                        dir = real;
                    }
                    Err(e) => return Err(ToolError::io("create directory", &dir, &e)),
                }
            }
        }
        let target = dir.join(&name);
        match std::fs::symlink_metadata(&target) {
            Ok(md) if md.file_type().is_symlink() => {
                let real = canonical(&target).map_err(|_| {
                    ToolError::outside_workspace(format!(
                        "{raw} is a symlink that does not resolve inside the workspace"
                    ))
                })?;
                self.check_inside(raw, &real)?;
                if real.is_dir() {
                    return Err(ToolError::data(format!("{raw} is a directory")));
                }
                Ok(real)
            }
            Ok(md) if md.is_dir() => Err(ToolError::data(format!("{raw} is a directory"))),
            Ok(_) => Ok(target),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(target),
            Err(e) => Err(ToolError::io("inspect", &target, &e)),
        }
    }

    fn check_inside(&self, raw: &str, real: &Path) -> Result<(), ToolError> {
        if relative_to(real, &self.root).is_some() {
            Ok(())
        } else {
            Err(ToolError::outside_workspace(format!(
                "{raw} resolves to {}, outside the workspace (through a symlink)",
                real.display()
            )))
        }
    }

    /// A path shown to the model: relative to the workspace when it is inside it.
    pub(crate) fn display_relative(&self, real: &Path) -> PathBuf {
        relative_to(real, &self.root).unwrap_or_else(|| real.to_path_buf())
    }
}

/// The lexical half of keeping a tool path inside a workspace on this computer: a clean path
/// relative to the workspace (empty for the workspace itself).
/// Refuses empty paths, NUL bytes, `..`, and absolute paths under none of `roots` (the
/// workspace's names); `.` parts are dropped. `shown` is the workspace as messages name it.
pub(crate) fn lexically_relative(
    raw: &str,
    roots: &[&Path],
    shown: &str,
) -> Result<PathBuf, ToolError> {
    if raw.is_empty() {
        return Err(ToolError::data("the path is empty"));
    }
    if raw.contains('\0') {
        return Err(ToolError::data("the path contains a NUL byte"));
    }
    let path = Path::new(raw);
    let rel = if path.is_absolute() {
        roots
            .iter()
            .find_map(|root| relative_to(path, root))
            .ok_or_else(|| {
                ToolError::outside_workspace(format!(
                    "{raw} is outside the workspace {shown}; use a path relative to it"
                ))
            })?
    } else {
        path.to_path_buf()
    };
    let mut clean = PathBuf::new();
    for part in rel.components() {
        match part {
            Component::Normal(p) => clean.push(p),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(ToolError::outside_workspace(format!(
                    "{raw} uses `..`; paths must stay inside the workspace"
                )));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(ToolError::outside_workspace(format!(
                    "{raw} starts at a drive or a root, outside the workspace {shown}; use a path relative to it"
                )));
            }
        }
    }
    Ok(clean)
}
