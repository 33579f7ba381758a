//! The host sandbox's `read_file` and `write_file` against real files in temporary workspaces,
//! including every way a path could leave the workspace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use decima_core::FailureClass;
use decima_sandbox::host::{
    HostLimits, HostSandbox, ReadFileRequest, Sandbox, ToolError, WriteFileRequest,
};

/// Links `link` to `target`, as `ln -s` does.
#[cfg(unix)]
fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Links `link` to `target`, as `mklink` does: a folder's link or a file's (a missing target
/// is taken for a file), a relative target read from the link's folder. Windows lets an
/// account make links with Developer Mode or the privilege to.
#[cfg(windows)]
fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> std::io::Result<()> {
    let target = PathBuf::from(target.as_ref().to_string_lossy().replace('/', "\\"));
    let link = link.as_ref();
    let resolved = link
        .parent()
        .map_or_else(|| target.clone(), |dir| dir.join(&target));
    if resolved.is_dir() {
        std::os::windows::fs::symlink_dir(&target, link)
    } else {
        std::os::windows::fs::symlink_file(&target, link)
    }
}

/// A workspace `ws` and a directory `outside` beside it (with `outside/secret.txt`).
struct Fixture {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    sb: HostSandbox,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir(&ws).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    let sb = HostSandbox::new(ws.clone(), HostLimits::default());
    Fixture {
        _dir: dir,
        ws,
        outside,
        sb,
    }
}

impl Fixture {
    async fn read(&self, path: &str) -> Result<String, ToolError> {
        let req = ReadFileRequest {
            path: path.to_owned(),
            offset: None,
            limit: None,
        };
        self.sb.read_file(req).await.map(|c| c.content)
    }

    async fn write(&self, path: &str, content: &str) -> Result<(), ToolError> {
        let req = WriteFileRequest {
            path: path.to_owned(),
            content: content.to_owned(),
        };
        self.sb.write_file(req).await.map(|_| ())
    }

    /// Everything under `outside`, to prove nothing there changed.
    fn outside_listing(&self) -> Vec<(PathBuf, String)> {
        let mut all = Vec::new();
        fn walk(dir: &Path, all: &mut Vec<(PathBuf, String)>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, all);
                } else {
                    all.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        walk(&self.outside, &mut all);
        all.sort();
        all
    }

    fn assert_outside_untouched(&self) {
        assert_eq!(
            self.outside_listing(),
            vec![(self.outside.join("secret.txt"), "secret\n".to_owned())]
        );
    }
}

fn assert_refused(result: Result<impl std::fmt::Debug, ToolError>, needle: &str) {
    let err = result.unwrap_err();
    assert_eq!(err.class, FailureClass::Permission, "{err:?}");
    assert!(
        err.message.contains(needle),
        "{:?} does not mention {needle:?}",
        err.message
    );
}

#[tokio::test]
async fn write_then_read_round_trips_and_creates_parent_directories() {
    let f = fixture();
    let out =
        f.sb.write_file(WriteFileRequest {
            path: "a/b/c.txt".into(),
            content: "hello\nworld\n".into(),
        })
        .await
        .unwrap();
    assert!(out.created);
    assert_eq!(out.bytes, 12);
    assert_eq!(out.path, PathBuf::from("a/b/c.txt"));
    assert_eq!(
        std::fs::read_to_string(f.ws.join("a/b/c.txt")).unwrap(),
        "hello\nworld\n"
    );
    assert_eq!(f.read("a/b/c.txt").await.unwrap(), "hello\nworld\n");
    assert_eq!(
        f.read("./a/b/../b/c.txt").await.unwrap_err().class,
        FailureClass::Permission
    );
    let again =
        f.sb.write_file(WriteFileRequest {
            path: "a/b/c.txt".into(),
            content: "new".into(),
        })
        .await
        .unwrap();
    assert!(!again.created);
    assert_eq!(f.read("a/b/c.txt").await.unwrap(), "new");
    // Atomic writes leave no temporary files behind.
    let names: Vec<_> = std::fs::read_dir(f.ws.join("a/b"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("c.txt")]);
}

#[tokio::test]
async fn absolute_paths_inside_the_workspace_are_accepted() {
    let f = fixture();
    let abs = f.ws.join("x.txt");
    f.write(abs.to_str().unwrap(), "x").await.unwrap();
    assert_eq!(f.read(abs.to_str().unwrap()).await.unwrap(), "x");
}

#[tokio::test]
async fn dot_dot_paths_are_refused() {
    let f = fixture();
    assert_refused(f.read("../outside/secret.txt").await, "..");
    assert_refused(f.write("../outside/new.txt", "x").await, "..");
    assert_refused(f.write("sub/../../outside/secret.txt", "x").await, "..");
    f.assert_outside_untouched();
    assert!(
        !f.ws.join("sub").exists(),
        "nothing is created for a refused path"
    );
}

#[tokio::test]
async fn absolute_paths_outside_the_workspace_are_refused() {
    let f = fixture();
    let secret = f.outside.join("secret.txt");
    assert_refused(
        f.read(secret.to_str().unwrap()).await,
        "outside the workspace",
    );
    assert_refused(
        f.write(secret.to_str().unwrap(), "pwned").await,
        "outside the workspace",
    );
    assert_refused(f.read("/etc/passwd").await, "outside the workspace");
    f.assert_outside_untouched();
}

#[tokio::test]
async fn a_symlinked_file_leading_out_is_refused() {
    let f = fixture();
    symlink(f.outside.join("secret.txt"), f.ws.join("link.txt")).unwrap();
    assert_refused(f.read("link.txt").await, "outside the workspace");
    assert_refused(f.write("link.txt", "pwned").await, "outside the workspace");
    // A dangling link to a not-yet-existing file outside is refused too.
    symlink(f.outside.join("new.txt"), f.ws.join("dangling.txt")).unwrap();
    assert_refused(f.write("dangling.txt", "pwned").await, "symlink");
    f.assert_outside_untouched();
    assert!(
        f.ws.join("link.txt").is_symlink(),
        "the link itself is left alone"
    );
}

#[tokio::test]
async fn a_symlinked_parent_directory_leading_out_is_refused() {
    let f = fixture();
    symlink(&f.outside, f.ws.join("dir")).unwrap();
    assert_refused(f.read("dir/secret.txt").await, "outside the workspace");
    assert_refused(
        f.write("dir/new.txt", "pwned").await,
        "outside the workspace",
    );
    assert_refused(
        f.write("dir/deeper/new.txt", "pwned").await,
        "outside the workspace",
    );
    assert_refused(
        f.write("dir/secret.txt", "pwned").await,
        "outside the workspace",
    );
    f.assert_outside_untouched();
}

#[tokio::test]
async fn symlinks_that_stay_inside_the_workspace_are_followed() {
    let f = fixture();
    std::fs::create_dir(f.ws.join("real")).unwrap();
    symlink(f.ws.join("real"), f.ws.join("alias")).unwrap();
    f.write("alias/file.txt", "via alias").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(f.ws.join("real/file.txt")).unwrap(),
        "via alias"
    );
    symlink("real/file.txt", f.ws.join("file-link")).unwrap();
    assert_eq!(f.read("file-link").await.unwrap(), "via alias");
    f.write("file-link", "through the link").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(f.ws.join("real/file.txt")).unwrap(),
        "through the link"
    );
    assert!(f.ws.join("file-link").is_symlink());
}

#[tokio::test]
async fn a_missing_file_is_a_data_failure() {
    let f = fixture();
    let err = f.read("nope.txt").await.unwrap_err();
    assert_eq!(err.class, FailureClass::Data);
    assert!(err.message.contains("no such file"), "{}", err.message);
}

#[tokio::test]
async fn bad_paths_are_data_failures() {
    let f = fixture();
    std::fs::create_dir(f.ws.join("d")).unwrap();
    std::fs::write(f.ws.join("plain"), "x").unwrap();
    for (result, needle) in [
        (f.read("").await.map(|_| ()), "empty"),
        (f.read("d").await.map(|_| ()), "directory"),
        (f.write("d", "x").await, "directory"),
        (f.write("plain/child.txt", "x").await, "not a directory"),
        (f.write(".", "x").await, "workspace itself"),
    ] {
        let err = result.unwrap_err();
        assert_eq!(err.class, FailureClass::Data, "{err:?}");
        assert!(
            err.message.contains(needle),
            "{:?} does not mention {needle:?}",
            err.message
        );
    }
}

#[cfg(unix)]
#[tokio::test]
async fn an_unreadable_file_is_a_permission_failure() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    let path = f.ws.join("locked.txt");
    std::fs::write(&path, "x").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&path).is_ok() {
        // Root reads through permission bits, so the OS cannot be made to refuse here; the
        // classification of the error it would give is checked instead, on a real errno.
        let denied = std::io::Error::from_raw_os_error(13); // EACCES
        let err = decima_sandbox::ToolError::io("read", &path, &denied);
        assert_eq!(err.class, FailureClass::Permission);
        assert!(err.message.contains("locked.txt"), "{}", err.message);
        let read_only = std::io::Error::from_raw_os_error(30); // EROFS
        assert_eq!(
            decima_sandbox::ToolError::io("write", &path, &read_only).class,
            FailureClass::Permission
        );
        return;
    }
    assert_eq!(
        f.read("locked.txt").await.unwrap_err().class,
        FailureClass::Permission
    );
}

#[tokio::test]
async fn a_workspace_that_is_gone_is_a_system_failure() {
    let f = fixture();
    std::fs::remove_dir_all(&f.ws).unwrap();
    assert_eq!(f.read("x").await.unwrap_err().class, FailureClass::System);
    assert_eq!(
        f.write("x", "y").await.unwrap_err().class,
        FailureClass::System
    );
    assert!(!f.ws.exists(), "a write does not recreate the workspace");
}

#[tokio::test]
async fn offset_and_limit_select_lines_counted_from_one() {
    let f = fixture();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    f.write("ten.txt", &text).await.unwrap();
    let c =
        f.sb.read_file(ReadFileRequest {
            path: "ten.txt".into(),
            offset: Some(3),
            limit: Some(2),
        })
        .await
        .unwrap();
    assert_eq!(c.content, "line 3\nline 4\n");
    assert_eq!((c.first_line, c.lines), (3, 2));
    assert!(c.truncated);
    assert!(
        c.note.as_deref().unwrap().contains("offset=5"),
        "{:?}",
        c.note
    );
    let end =
        f.sb.read_file(ReadFileRequest {
            path: "ten.txt".into(),
            offset: Some(9),
            limit: None,
        })
        .await
        .unwrap();
    assert_eq!(end.content, "line 9\nline 10\n");
    assert!(!end.truncated && end.note.is_none());
    let past =
        f.sb.read_file(ReadFileRequest {
            path: "ten.txt".into(),
            offset: Some(50),
            limit: None,
        })
        .await
        .unwrap();
    assert_eq!(past.content, "");
    assert!(past.note.unwrap().contains("only 10 lines"));
}

#[tokio::test]
async fn large_reads_are_capped_with_a_note() {
    let f = fixture();
    let text: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(f.ws.join("many.txt"), &text).unwrap();
    let c =
        f.sb.read_file(ReadFileRequest {
            path: "many.txt".into(),
            offset: None,
            limit: None,
        })
        .await
        .unwrap();
    assert_eq!(c.lines, 2000);
    assert!(c.truncated);
    assert!(c.to_tool_text().contains("read on with offset=2001"));

    // A 10 MB file of long lines: the byte cap and the line cut apply, memory stays small.
    let long = "y".repeat(10_000) + "\n";
    std::fs::write(f.ws.join("big.txt"), long.repeat(1000)).unwrap();
    let c =
        f.sb.read_file(ReadFileRequest {
            path: "big.txt".into(),
            offset: None,
            limit: None,
        })
        .await
        .unwrap();
    assert!(c.content.len() <= 256 * 1024);
    assert!(c.truncated);
    let note = c.note.unwrap();
    assert!(note.contains("capped at 262144 bytes"), "{note}");
    assert!(note.contains("longer than 4096 bytes were cut"), "{note}");
}

#[tokio::test]
async fn invalid_utf8_in_a_file_is_read_lossily() {
    let f = fixture();
    std::fs::write(f.ws.join("bin"), b"\xff\xfeok\n").unwrap();
    assert_eq!(f.read("bin").await.unwrap(), "\u{FFFD}\u{FFFD}ok\n");
}
