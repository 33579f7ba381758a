//! Keeping tool paths inside the container's `/workspace`.
//!
//! Two steps, like the host sandbox: a lexical check here (no `..`, no absolute path outside
//! `/workspace`), then a resolution inside the container with `realpath` (see
//! `RESOLVE_READ` and `RESOLVE_WRITE`), so a symlink that leads out of the workspace is
//! refused before anything is read or written. The resolved path is what is then downloaded or
//! uploaded. A process in the container racing to swap a directory for a symlink between the
//! check and the transfer is not defended against; it could only reach the container's own
//! files, which its shell can read anyway (the root filesystem is read-only).
//!
//! A container's paths are POSIX paths whatever this computer's are: they are split at `/`
//! only, so on Windows `/workspace/a` is still absolute and `a\b` still one name.

use crate::error::ToolError;

/// The workspace inside the container.
pub const WORKSPACE: &str = "/workspace";

/// A tool path as a clean path relative to `/workspace` ("" = the workspace itself). Refuses
/// empty paths, NUL bytes, `..` and absolute paths outside `/workspace`; `.` parts and empty
/// ones (`a//b`) are dropped.
pub(crate) fn container_relative(raw: &str) -> Result<String, ToolError> {
    if raw.is_empty() {
        return Err(ToolError::data("the path is empty"));
    }
    if raw.contains('\0') {
        return Err(ToolError::data("the path contains a NUL byte"));
    }
    let mut rest: Vec<&str> = raw
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    if raw.starts_with('/') {
        if rest.first().copied() != WORKSPACE.strip_prefix('/') {
            return Err(ToolError::outside_workspace(format!(
                "{raw} is outside the workspace {WORKSPACE}; use a path relative to it"
            )));
        }
        rest.remove(0);
    }
    if rest.contains(&"..") {
        return Err(ToolError::outside_workspace(format!(
            "{raw} uses `..`; paths must stay inside the workspace"
        )));
    }
    Ok(rest.join("/"))
}

/// True when a resolved path is `/workspace` or inside it.
pub(crate) fn inside_workspace(real: &str) -> bool {
    real == WORKSPACE
        || real
            .strip_prefix(WORKSPACE)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Resolves `$1` (an absolute path under /workspace) for reading. Prints the kind (`file`,
/// `dir`, `other`, or `missing`) on the first line and the real path on the second.
pub(crate) const RESOLVE_READ: &str = r#"p=$1
if [ ! -e "$p" ]; then echo missing; exit 0; fi
r=$(realpath "$p") || { echo missing; exit 0; }
if [ -d "$r" ]; then k=dir; elif [ -f "$r" ]; then k=file; else k=other; fi
printf '%s\n%s\n' "$k" "$r"
"#;

/// Resolves `$1` (an absolute path under /workspace) for writing: checks the nearest existing
/// ancestor of its directory resolves inside the workspace before creating the missing ones
/// (`mkdir -p`), then resolves the directory and an existing final symlink. Prints a status
/// (`new`, `exists`, `dir`, `notdir`, `outside`) on the first line and the real path to write
/// on the second (for `outside`: the part that leads out).
pub(crate) const RESOLVE_WRITE: &str = r#"p=$1; d=${p%/*}; n=${p##*/}
e=$d
while [ -n "$e" ] && [ ! -e "$e" ] && [ ! -L "$e" ]; do e=${e%/*}; done
r=$(realpath "$e" 2>/dev/null) || { printf 'outside\n%s\n' "$e"; exit 0; }
case $r in /workspace|/workspace/*) ;; *) printf 'outside\n%s\n' "$e"; exit 0;; esac
[ -d "$r" ] || { printf 'notdir\n%s\n' "$e"; exit 0; }
mkdir -p "$d" || exit 3
rd=$(realpath "$d") || exit 3
case $rd in /workspace|/workspace/*) ;; *) printf 'outside\n%s\n' "$d"; exit 0;; esac
t=$rd/$n
if [ -L "$t" ]; then
  t=$(realpath "$t" 2>/dev/null) || { printf 'outside\n%s\n' "$p"; exit 0; }
  case $t in /workspace/*) ;; *) printf 'outside\n%s\n' "$p"; exit 0;; esac
fi
if [ -d "$t" ]; then k=dir; elif [ -e "$t" ]; then k=exists; else k=new; fi
printf '%s\n%s\n' "$k" "$t"
"#;

/// Splits a resolver's output into its first line and the rest (the path, which may itself
/// contain newlines), without the final newline.
pub(crate) fn split_answer(out: &str) -> (&str, &str) {
    let out = out.strip_suffix('\n').unwrap_or(out);
    match out.split_once('\n') {
        Some((kind, path)) => (kind, path),
        None => (out, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_stay_inside() {
        assert_eq!(container_relative("a/./b").unwrap(), "a/b");
        assert_eq!(container_relative("/workspace/a").unwrap(), "a");
        assert_eq!(container_relative("/workspace").unwrap(), "");
        assert!(container_relative("../x").unwrap_err().refused);
        assert!(container_relative("a/../../x").unwrap_err().refused);
        assert!(container_relative("/etc/passwd").unwrap_err().refused);
        assert!(container_relative("/workspacex/a").unwrap_err().refused);
        assert!(!container_relative("").unwrap_err().refused);
        assert!(!container_relative("a\0b").unwrap_err().refused);
        assert_eq!(container_relative("./a//b/").unwrap(), "a/b");
        assert_eq!(container_relative("/./workspace//a/.").unwrap(), "a");
        // A backslash is part of a name in the container, on every host.
        assert_eq!(container_relative(r"a\b").unwrap(), r"a\b");
        assert!(container_relative("/../workspace/a").unwrap_err().refused);
        assert!(container_relative("/").unwrap_err().refused);
    }

    #[test]
    fn inside_is_by_component() {
        assert!(inside_workspace("/workspace"));
        assert!(inside_workspace("/workspace/a"));
        assert!(!inside_workspace("/workspace2/a"));
        assert!(!inside_workspace("/etc"));
    }

    #[test]
    fn answers_split_at_the_first_line() {
        assert_eq!(
            split_answer("file\n/workspace/a\n"),
            ("file", "/workspace/a")
        );
        assert_eq!(
            split_answer("new\n/workspace/a\nb\n"),
            ("new", "/workspace/a\nb")
        );
        assert_eq!(split_answer("missing\n"), ("missing", ""));
    }
}
