#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The snapshot store against real files in temp directories.

use std::collections::BTreeMap;
use std::fs;
#[cfg(unix)]
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use decima_sandbox::SandboxError;
use decima_sandbox::snapshot::{Entry, SnapshotId, SnapshotStore};

/// What a tree holds at one path, compared byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Dir {
        mode: u32,
    },
    File {
        content: Vec<u8>,
        mode: u32,
        mtime: SystemTime,
    },
    Symlink {
        target: PathBuf,
    },
    Special,
}

/// Every entry under `root` (not following symlinks), by relative path.
fn tree(root: &Path) -> BTreeMap<PathBuf, Node> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Node>) {
        for item in fs::read_dir(dir).unwrap() {
            let item = item.unwrap();
            let path = item.path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let meta = fs::symlink_metadata(&path).unwrap();
            let mode = mode_of(&meta);
            let node = if meta.file_type().is_symlink() {
                Node::Symlink {
                    target: fs::read_link(&path).unwrap(),
                }
            } else if meta.is_dir() {
                walk(root, &path, out);
                Node::Dir { mode }
            } else if meta.is_file() {
                Node::File {
                    content: fs::read(&path).unwrap(),
                    mode,
                    mtime: meta.modified().unwrap(),
                }
            } else {
                Node::Special
            };
            out.insert(rel, node);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Asserts two trees are equal, naming the paths that differ.
fn assert_same_tree(expected: &BTreeMap<PathBuf, Node>, actual: &BTreeMap<PathBuf, Node>) {
    let mut diffs = Vec::new();
    for (path, node) in expected {
        match actual.get(path) {
            None => diffs.push(format!("missing {}", path.display())),
            Some(other) if other != node => diffs.push(format!("differs {}", path.display())),
            Some(_) => {}
        }
    }
    for path in actual.keys() {
        if !expected.contains_key(path) {
            diffs.push(format!("extra {}", path.display()));
        }
    }
    assert!(diffs.is_empty(), "trees differ:\n{}", diffs.join("\n"));
}

fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut v: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
    // Make sure the awkward bytes are there.
    v.extend_from_slice(&[0, 0xff, 0, 0xff, b'\n', b'\r']);
    v
}

/// Permission bits, as a snapshot records them.
#[cfg(unix)]
fn mode_of(meta: &fs::Metadata) -> u32 {
    meta.permissions().mode() & 0o7777
}

/// What a snapshot records on Windows: read-only files `0o444`, other files `0o644`,
/// directories `0o755`.
#[cfg(windows)]
fn mode_of(meta: &fs::Metadata) -> u32 {
    if meta.is_dir() {
        0o755
    } else if meta.permissions().readonly() {
        0o444
    } else {
        0o644
    }
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// The read-only attribute of a file, set when `mode` has no write bit (directories have none).
#[cfg(windows)]
fn set_mode(path: &Path, mode: u32) {
    let meta = fs::symlink_metadata(path).unwrap();
    if !meta.is_dir() {
        let mut perm = meta.permissions();
        perm.set_readonly(mode & 0o222 == 0);
        fs::set_permissions(path, perm).unwrap();
    }
}

fn write(path: &Path, content: &[u8], mode: u32) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    // A read-only file cannot be written on Windows, whoever you are.
    #[cfg(windows)]
    if fs::symlink_metadata(path).is_ok() {
        set_mode(path, 0o644);
    }
    fs::write(path, content).unwrap();
    set_mode(path, mode);
}

/// Lets the files just written leave the stat cache's racy window.
fn settle() {
    std::thread::sleep(Duration::from_millis(150));
}

/// A workspace with nested folders, binary and text files, an empty directory, an executable,
/// a read-only file and (on Unix) symlinks: one inside, one dangling, one relative going up.
fn populate(ws: &Path) {
    write(&ws.join("README.md"), b"# project\n", 0o644);
    write(&ws.join("src/main.rs"), b"fn main() {}\n", 0o644);
    write(
        &ws.join("src/deep/er/still/data.bin"),
        &random_bytes(1, 10_000),
        0o600,
    );
    write(&ws.join("bin/run.sh"), b"#!/bin/sh\necho hi\n", 0o755);
    write(&ws.join("readonly.txt"), b"do not touch\n", 0o444);
    write(
        &ws.join("big.bin"),
        &random_bytes(2, 9 * 1024 * 1024),
        0o644,
    );
    write(&ws.join("dup_a.bin"), &random_bytes(3, 5000), 0o644);
    write(&ws.join("dup_b.bin"), &random_bytes(3, 5000), 0o644);
    write(&ws.join("empty.txt"), b"", 0o644);
    fs::create_dir_all(ws.join("empty_dir")).unwrap();
    fs::create_dir_all(ws.join("nested/empty/inside")).unwrap();
    set_mode(&ws.join("nested"), 0o750);
    #[cfg(unix)]
    {
        symlink("src/main.rs", ws.join("link_to_main")).unwrap();
        symlink("does/not/exist", ws.join("dangling")).unwrap();
        symlink("../still", ws.join("src/deep/er/up")).unwrap();
    }
}

fn setup() -> (tempfile::TempDir, PathBuf, SnapshotStore) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("workspace");
    fs::create_dir(&ws).unwrap();
    let store = SnapshotStore::open(tmp.path().join("data/snapshots")).unwrap();
    (tmp, ws, store)
}

#[cfg(unix)]
#[test]
fn restore_undoes_creations_deletions_changes_and_mode_changes() {
    let (_tmp, ws, store) = setup();
    populate(&ws);
    let snap = store.snapshot(&ws).unwrap();
    let before = tree(&ws);
    assert_eq!(snap.stats.skipped, 0, "{:?}", snap.manifest.skipped);
    assert_eq!(snap.stats.symlinks, 3);
    assert_eq!(snap.stats.files, 9);

    // Every kind of change an agent could make.
    fs::remove_file(ws.join("src/main.rs")).unwrap();
    write(&ws.join("src/new.rs"), b"new file", 0o644);
    write(&ws.join("README.md"), b"# changed, and longer\n", 0o644);
    fs::write(
        ws.join("src/deep/er/still/data.bin"),
        random_bytes(9, 10_000),
    )
    .unwrap();
    fs::set_permissions(ws.join("bin/run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    fs::set_permissions(ws.join("readonly.txt"), fs::Permissions::from_mode(0o666)).unwrap();
    fs::write(ws.join("readonly.txt"), b"touched\n").unwrap();
    fs::remove_dir(ws.join("empty_dir")).unwrap();
    fs::create_dir_all(ws.join("created/dir/tree")).unwrap();
    write(&ws.join("created/dir/tree/file"), b"x", 0o644);
    fs::remove_dir_all(ws.join("nested/empty")).unwrap();
    fs::remove_file(ws.join("link_to_main")).unwrap();
    symlink("README.md", ws.join("link_to_main")).unwrap();
    fs::remove_file(ws.join("dangling")).unwrap();
    fs::create_dir(ws.join("dangling")).unwrap(); // a symlink became a directory
    fs::remove_file(ws.join("empty.txt")).unwrap();
    symlink("README.md", ws.join("empty.txt")).unwrap(); // a file became a symlink
    fs::remove_file(ws.join("big.bin")).unwrap();
    fs::set_permissions(ws.join("nested"), fs::Permissions::from_mode(0o700)).unwrap();

    let stats = store.restore(&snap.id, &ws).unwrap();
    assert_same_tree(&before, &tree(&ws));
    // main.rs, README.md, data.bin, readonly.txt, big.bin, empty.txt
    assert_eq!(stats.files_written, 6, "{stats:?}");
    assert!(stats.files_unchanged >= 3, "{stats:?}");
    assert!(stats.removed >= 3, "{stats:?}");

    // Restoring again changes nothing and reads nothing.
    let again = store.restore(&snap.id, &ws).unwrap();
    assert_eq!(again.files_written, 0, "{again:?}");
    assert_eq!(again.removed, 0, "{again:?}");
    assert_same_tree(&before, &tree(&ws));
}

#[test]
fn restore_into_an_empty_or_missing_directory_rebuilds_everything() {
    let (tmp, ws, store) = setup();
    populate(&ws);
    let snap = store.snapshot(&ws).unwrap();
    let before = tree(&ws);
    let elsewhere = tmp.path().join("fresh/workspace");
    let stats = store.restore(&snap.id, &elsewhere).unwrap();
    assert_same_tree(&before, &tree(&elsewhere));
    assert_eq!(stats.files_written, 9);
    // Windows removes no read-only file.
    set_mode(&ws.join("readonly.txt"), 0o644);
    fs::remove_dir_all(&ws).unwrap();
    fs::create_dir(&ws).unwrap();
    store.restore(&snap.id, &ws).unwrap();
    assert_same_tree(&before, &tree(&ws));
}

#[test]
fn a_second_snapshot_rehashes_only_the_changed_file() {
    let (tmp, ws, store) = setup();
    populate(&ws);
    settle();
    let first = store.snapshot(&ws).unwrap();
    assert_eq!(first.stats.hashed, 9);
    // dup_a and dup_b share one object.
    assert_eq!(first.stats.new_objects, 8);

    let nothing = store.snapshot(&ws).unwrap();
    assert_eq!(nothing.stats.hashed, 0, "{:?}", nothing.stats);
    assert_eq!(nothing.stats.bytes_hashed, 0);
    assert_eq!(
        nothing.id, first.id,
        "an unchanged workspace has the same id"
    );

    // Same size, different bytes.
    fs::write(
        ws.join("src/deep/er/still/data.bin"),
        random_bytes(7, 10_000),
    )
    .unwrap();
    settle();
    let second = store.snapshot(&ws).unwrap();
    assert_eq!(second.stats.hashed, 1, "{:?}", second.stats);
    assert_eq!(second.stats.bytes_hashed, 10_006);
    assert_eq!(second.stats.new_objects, 1);
    assert_eq!(second.stats.files, 9);
    assert_ne!(second.id, first.id);

    // The cache survives reopening the store.
    let reopened = SnapshotStore::open(tmp.path().join("data/snapshots")).unwrap();
    let third = reopened.snapshot(&ws).unwrap();
    assert_eq!(third.stats.hashed, 0, "{:?}", third.stats);
    assert_eq!(third.id, second.id);
}

#[test]
fn identical_content_is_stored_once() {
    // The copies are hashed by several threads at once; each round is a fresh store, so that the
    // threads race to store the same new object, and exactly one of them may count it as new.
    for round in 0..12 {
        let (tmp, ws, store) = setup();
        let content = random_bytes(5 + round, 4096);
        for i in 0..40 {
            write(&ws.join(format!("copies/{i}.bin")), &content, 0o644);
        }
        let snap = store.snapshot(&ws).unwrap();
        assert_eq!(snap.stats.files, 40);
        assert_eq!(snap.stats.new_objects, 1, "round {round}");
        let mut objects = 0;
        for prefix in fs::read_dir(tmp.path().join("data/snapshots/objects")).unwrap() {
            objects += fs::read_dir(prefix.unwrap().path()).unwrap().count();
        }
        assert_eq!(
            objects, 1,
            "round {round}: no temp file is left beside the object"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_pointing_outside_is_recorded_not_followed() {
    let (tmp, ws, store) = setup();
    let outside = tmp.path().join("outside");
    write(&outside.join("secret.txt"), b"outside the workspace", 0o644);
    symlink(&outside, ws.join("escape")).unwrap();
    symlink(outside.join("secret.txt"), ws.join("escape_file")).unwrap();
    write(&ws.join("inside.txt"), b"in", 0o644);

    let snap = store.snapshot(&ws).unwrap();
    assert_eq!(snap.stats.files, 1);
    assert_eq!(snap.stats.symlinks, 2);
    let target = outside.display().to_string();
    assert!(snap.manifest.entries.contains(&Entry::Symlink {
        path: "escape".into(),
        target
    }));
    assert!(
        !snap
            .manifest
            .entries
            .iter()
            .any(|e| e.path().contains("secret"))
    );

    let outside_before = tree(&outside);
    fs::remove_file(ws.join("escape")).unwrap();
    let before = {
        let mut t = tree(&ws);
        t.insert(
            "escape".into(),
            Node::Symlink {
                target: outside.clone(),
            },
        );
        t
    };
    store.restore(&snap.id, &ws).unwrap();
    assert_same_tree(&before, &tree(&ws));
    assert_same_tree(&outside_before, &tree(&outside));
}

#[cfg(unix)]
#[test]
fn restore_never_writes_through_a_symlink_planted_since() {
    let (tmp, ws, store) = setup();
    let outside = tmp.path().join("outside");
    write(&outside.join("victim.txt"), b"victim", 0o644);
    write(&outside.join("dir/victim.txt"), b"victim too", 0o644);
    write(&ws.join("file.txt"), b"workspace file", 0o644);
    write(&ws.join("dir/victim.txt"), b"workspace dir file", 0o644);
    write(&ws.join("keep/other.txt"), b"other", 0o644);
    let snap = store.snapshot(&ws).unwrap();
    let before = tree(&ws);
    let outside_before = tree(&outside);

    // The agent replaces a file and a directory with links out of the workspace, and drops a
    // link to an outside directory where nothing was.
    fs::remove_file(ws.join("file.txt")).unwrap();
    symlink(outside.join("victim.txt"), ws.join("file.txt")).unwrap();
    fs::remove_dir_all(ws.join("dir")).unwrap();
    symlink(outside.join("dir"), ws.join("dir")).unwrap();
    symlink(&outside, ws.join("keep/planted")).unwrap();

    store.restore(&snap.id, &ws).unwrap();
    assert_same_tree(&before, &tree(&ws));
    assert_same_tree(&outside_before, &tree(&outside));
}

#[cfg(unix)]
#[test]
fn special_files_are_reported_as_skipped_and_left_alone() {
    let (_tmp, ws, store) = setup();
    write(&ws.join("a.txt"), b"a", 0o644);
    let status = std::process::Command::new("mkfifo")
        .arg(ws.join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let _listener = std::os::unix::net::UnixListener::bind(ws.join("sock")).unwrap();

    let snap = store.snapshot(&ws).unwrap();
    let kinds: Vec<(&str, &str)> = snap
        .manifest
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.kind.as_str()))
        .collect();
    assert_eq!(kinds, [("pipe", "fifo"), ("sock", "socket")]);
    assert!(snap.manifest.skipped.iter().all(|s| !s.reason.is_empty()));
    assert_eq!(snap.stats.skipped, 2);

    fs::write(ws.join("a.txt"), b"changed").unwrap();
    store.restore(&snap.id, &ws).unwrap();
    assert_eq!(fs::read(ws.join("a.txt")).unwrap(), b"a");
    assert!(
        fs::symlink_metadata(ws.join("pipe")).is_ok(),
        "the fifo stays"
    );
    assert!(
        fs::symlink_metadata(ws.join("sock")).is_ok(),
        "the socket stays"
    );
}

#[test]
fn the_decima_folder_is_excluded_and_untouched_by_restore() {
    let (_tmp, ws, store) = setup();
    write(&ws.join("work.txt"), b"work", 0o644);
    write(&ws.join(".decima/spill/out-1.txt"), b"tool output", 0o644);
    write(
        &ws.join("sub/.decima/kept.txt"),
        b"only the top-level one is excluded",
        0o644,
    );
    let snap = store.snapshot(&ws).unwrap();
    assert!(
        snap.manifest
            .skipped
            .iter()
            .any(|s| s.path == ".decima" && s.kind == "excluded")
    );
    assert!(
        !snap
            .manifest
            .entries
            .iter()
            .any(|e| e.path().starts_with(".decima"))
    );
    assert!(
        snap.manifest
            .entries
            .iter()
            .any(|e| e.path() == "sub/.decima/kept.txt")
    );

    write(&ws.join(".decima/spill/out-2.txt"), b"later output", 0o644);
    store.restore(&snap.id, &ws).unwrap();
    assert_eq!(
        fs::read(ws.join(".decima/spill/out-1.txt")).unwrap(),
        b"tool output"
    );
    assert_eq!(
        fs::read(ws.join(".decima/spill/out-2.txt")).unwrap(),
        b"later output"
    );
}

#[test]
fn gc_keeps_live_snapshots_and_drops_the_rest() {
    let (_tmp, ws, store) = setup();
    write(&ws.join("shared.txt"), b"in both", 0o644);
    write(&ws.join("only_a.txt"), &random_bytes(11, 1000), 0o644);
    let a = store.snapshot(&ws).unwrap();
    fs::remove_file(ws.join("only_a.txt")).unwrap();
    write(&ws.join("only_b.txt"), &random_bytes(12, 2000), 0o644);
    let b = store.snapshot(&ws).unwrap();
    let b_tree = tree(&ws);
    assert_eq!(store.list().unwrap().len(), 2);

    let ghost = SnapshotId::parse(&"0".repeat(64)).unwrap();
    let stats = store
        .gc(&[b.id.clone(), ghost.clone()], Duration::ZERO)
        .unwrap();
    assert_eq!(stats.manifests_removed, 1);
    assert_eq!(stats.objects_removed, 1);
    assert_eq!(stats.bytes_freed, 1006);
    assert_eq!(stats.objects_kept, 2);
    assert_eq!(stats.missing_live, [ghost]);
    assert_eq!(store.list().unwrap(), std::slice::from_ref(&b.id));

    assert!(matches!(
        store.restore(&a.id, &ws),
        Err(SandboxError::SnapshotNotFound { .. })
    ));
    write(&ws.join("noise.txt"), b"noise", 0o644);
    store.restore(&b.id, &ws).unwrap();
    assert_same_tree(&b_tree, &tree(&ws));

    // A snapshot after gc must not trust a cached hash whose object is gone.
    fs::remove_file(ws.join("only_b.txt")).unwrap();
    write(&ws.join("only_a.txt"), &random_bytes(11, 1000), 0o644);
    let a2 = store.snapshot(&ws).unwrap();
    assert_ne!(a2.id, a.id, "mtimes are part of the manifest");
    assert_eq!(
        a2.stats.new_objects, 1,
        "the object was collected, so it is written again"
    );
    store
        .gc(std::slice::from_ref(&a2.id), Duration::ZERO)
        .unwrap();
    fs::remove_file(ws.join("only_a.txt")).unwrap();
    store.restore(&a2.id, &ws).unwrap();
    assert_eq!(
        fs::read(ws.join("only_a.txt")).unwrap(),
        random_bytes(11, 1000)
    );
}

#[test]
fn gc_keeps_recent_snapshots_and_waits_for_a_snapshot_under_way_elsewhere() {
    let (tmp, ws, store) = setup();
    write(&ws.join("a.txt"), b"taken a moment ago", 0o644);
    let fresh = store.snapshot(&ws).unwrap();
    // Not live, but written just now: its owner may not have recorded it yet.
    let stats = store.gc(&[], Duration::from_secs(600)).unwrap();
    assert_eq!((stats.manifests_removed, stats.recent_kept), (0, 1));
    assert!(store.contains(&fresh.id));

    // Another store on the same folder (another process) holds the lock while it snapshots or
    // restores: nothing is collected then.
    let other = SnapshotStore::open(tmp.path().join("data/snapshots")).unwrap();
    let holder = std::fs::File::open(tmp.path().join("data/snapshots/lock")).unwrap();
    holder.lock_shared().unwrap();
    let stats = other.gc(&[], Duration::ZERO).unwrap();
    assert!(stats.busy);
    assert!(store.contains(&fresh.id));
    drop(holder);
    let stats = other.gc(&[], Duration::ZERO).unwrap();
    assert!(!stats.busy);
    assert_eq!(stats.manifests_removed, 1);
    assert!(!store.contains(&fresh.id));
}

#[test]
fn damaged_objects_and_manifests_are_detected() {
    let (tmp, ws, store) = setup();
    write(&ws.join("f.txt"), b"the real content", 0o644);
    let snap = store.snapshot(&ws).unwrap();
    let Entry::File { hash, .. } = &snap.manifest.entries[0] else {
        panic!("not a file")
    };
    let object = tmp
        .path()
        .join("data/snapshots/objects")
        .join(&hash[..2])
        .join(hash);
    fs::write(&object, b"the fake content").unwrap();
    fs::write(ws.join("f.txt"), b"changed").unwrap();
    let err = store.restore(&snap.id, &ws).unwrap_err();
    assert!(matches!(err, SandboxError::CorruptSnapshot { .. }), "{err}");

    fs::remove_file(&object).unwrap();
    let err = store.restore(&snap.id, &ws).unwrap_err();
    assert!(err.to_string().contains("missing"), "{err}");
    assert_eq!(
        fs::read(ws.join("f.txt")).unwrap(),
        b"changed",
        "nothing touched"
    );

    let manifest = tmp
        .path()
        .join(format!("data/snapshots/manifests/{}.json", snap.id));
    fs::write(&manifest, br#"{"format":1,"entries":[],"skipped":[]}"#).unwrap();
    assert!(matches!(
        store.restore(&snap.id, &ws),
        Err(SandboxError::CorruptSnapshot { .. })
    ));
    assert!(SnapshotId::parse("not-an-id").is_err());
}

#[cfg(unix)]
#[test]
fn a_read_only_directory_is_restored_with_its_contents() {
    let (_tmp, ws, store) = setup();
    write(&ws.join("locked/a.txt"), b"a", 0o644);
    write(&ws.join("locked/b.txt"), b"b", 0o644);
    fs::set_permissions(ws.join("locked"), fs::Permissions::from_mode(0o555)).unwrap();
    let snap = store.snapshot(&ws).unwrap();
    let before = tree(&ws);
    fs::set_permissions(ws.join("locked"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_file(ws.join("locked/a.txt")).unwrap();
    write(&ws.join("locked/c.txt"), b"c", 0o644);
    fs::set_permissions(ws.join("locked"), fs::Permissions::from_mode(0o500)).unwrap();
    store.restore(&snap.id, &ws).unwrap();
    assert_same_tree(&before, &tree(&ws));
    fs::set_permissions(ws.join("locked"), fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_store_inside_the_workspace_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("workspace");
    write(&ws.join("a.txt"), b"a", 0o644);
    let store = SnapshotStore::open(ws.join("snapshots")).unwrap();
    let err = store.snapshot(&ws).unwrap_err();
    assert!(err.to_string().contains("inside this workspace"), "{err}");
    assert!(
        !ws.join("snapshots/manifests")
            .read_dir()
            .unwrap()
            .any(|_| true),
        "nothing was recorded"
    );
}

#[cfg(unix)]
#[test]
fn names_that_are_not_utf8_round_trip() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let (_tmp, ws, store) = setup();
    let odd = ws.join(OsStr::from_bytes(b"bin\xff\x01%41.dat"));
    write(&odd, &random_bytes(21, 300), 0o640);
    symlink(OsStr::from_bytes(b"target\xfe"), ws.join("odd_link")).unwrap();
    let snap = store.snapshot(&ws).unwrap();
    assert_eq!(snap.stats.skipped, 0);
    assert!(
        snap.manifest
            .entries
            .iter()
            .any(|e| e.path() == "bin%FF\u{1}%2541.dat")
    );
    let before = tree(&ws);
    fs::remove_file(&odd).unwrap();
    fs::remove_file(ws.join("odd_link")).unwrap();
    store.restore(&snap.id, &ws).unwrap();
    assert_same_tree(&before, &tree(&ws));
}

#[test]
fn an_error_part_way_says_what_was_already_restored() {
    let (tmp, ws, store) = setup();
    write(&ws.join("a.txt"), b"first", 0o644);
    write(&ws.join("b.txt"), b"second", 0o644);
    let snap = store.snapshot(&ws).unwrap();
    write(&ws.join("a.txt"), b"first, changed", 0o644);
    write(&ws.join("b.txt"), b"second, changed", 0o644);
    let Some(Entry::File { hash, .. }) = snap.manifest.entries.iter().find(|e| e.path() == "b.txt")
    else {
        panic!("no b.txt")
    };
    let object = tmp
        .path()
        .join("data/snapshots/objects")
        .join(&hash[..2])
        .join(hash);
    fs::write(&object, b"damaged").unwrap();

    let err = store.restore(&snap.id, &ws).unwrap_err().to_string();
    assert!(
        err.contains(r#"1 entry was already restored ("a.txt")"#),
        "{err}"
    );
    assert!(err.contains("restoring again finishes the job"), "{err}");
    assert_eq!(fs::read(ws.join("a.txt")).unwrap(), b"first");
    assert_eq!(fs::read(ws.join("b.txt")).unwrap(), b"second, changed");
}

#[test]
fn a_hard_link_out_of_the_workspace_is_never_written_through() {
    let (tmp, ws, store) = setup();
    let outside = tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    write(&ws.join("shared.txt"), b"recorded", 0o644);
    fs::hard_link(ws.join("shared.txt"), outside.join("shared.txt")).unwrap();
    write(&ws.join("ro.txt"), b"read-only", 0o444);
    fs::hard_link(ws.join("ro.txt"), outside.join("ro.txt")).unwrap();
    let snap = store.snapshot(&ws).unwrap();
    let before = tree(&ws);

    // The agent writes through the shared name (the outside name sees it: one file) and makes
    // the read-only one writable (both names again).
    write(&ws.join("shared.txt"), b"changed by the agent", 0o644);
    set_mode(&ws.join("ro.txt"), 0o644);
    let outside_before = tree(&outside);

    store.restore(&snap.id, &ws).unwrap();
    assert_same_tree(&before, &tree(&ws));
    // The restore replaced the workspace's names; the outside ones kept what they had.
    assert_same_tree(&outside_before, &tree(&outside));
    assert_eq!(
        fs::read(outside.join("shared.txt")).unwrap(),
        b"changed by the agent"
    );
}

/// Stores `manifest` under its id, as a snapshot would have.
#[cfg(windows)]
fn store_manifest(root: &Path, manifest: &decima_sandbox::snapshot::Manifest) -> SnapshotId {
    use sha2::Digest;
    let bytes = serde_json::to_vec(manifest).unwrap();
    let hex: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    fs::write(
        root.join(format!("data/snapshots/manifests/{hex}.json")),
        &bytes,
    )
    .unwrap();
    SnapshotId::parse(&hex).unwrap()
}

/// Snapshot `id` with one more entry: `like`'s file under the name `extra`.
#[cfg(windows)]
fn with_extra_entry(
    store: &SnapshotStore,
    root: &Path,
    id: &SnapshotId,
    like: &str,
    extra: &str,
) -> SnapshotId {
    let mut manifest = store.manifest(id).unwrap();
    let mut entry = manifest
        .entries
        .iter()
        .find(|e| e.path() == like)
        .unwrap()
        .clone();
    if let Entry::File { path, .. } = &mut entry {
        *path = extra.to_owned();
    }
    manifest.entries.push(entry);
    store_manifest(root, &manifest)
}

/// Snapshot `id` with one more entry: a link named `a_link` to `target`.
#[cfg(windows)]
fn with_extra_link(
    store: &SnapshotStore,
    root: &Path,
    id: &SnapshotId,
    target: &str,
) -> SnapshotId {
    let mut manifest = store.manifest(id).unwrap();
    manifest.entries.push(Entry::Symlink {
        path: "a_link".to_owned(),
        target: target.to_owned(),
    });
    store_manifest(root, &manifest)
}

#[cfg(windows)]
#[test]
fn read_only_files_round_trip() {
    let (_tmp, ws, store) = setup();
    write(&ws.join("ro.txt"), b"keep me", 0o444);
    write(&ws.join("ro_untouched_content.txt"), b"same bytes", 0o444);
    write(&ws.join("rw.txt"), b"plain", 0o644);
    let snap = store.snapshot(&ws).unwrap();
    let modes: BTreeMap<&str, u32> = snap
        .manifest
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::File { path, mode, .. } => Some((path.as_str(), *mode)),
            _ => None,
        })
        .collect();
    assert_eq!(modes["ro.txt"], 0o444);
    assert_eq!(modes["rw.txt"], 0o644);
    let before = tree(&ws);

    write(&ws.join("ro.txt"), b"overwritten", 0o644);
    set_mode(&ws.join("ro_untouched_content.txt"), 0o644);
    write(&ws.join("rw.txt"), b"now read-only", 0o444);
    write(&ws.join("new_read_only.txt"), b"created since", 0o444);
    write(
        &ws.join("new_dir/deep_read_only.txt"),
        b"created since",
        0o444,
    );

    let stats = store.restore(&snap.id, &ws).unwrap();
    assert_same_tree(&before, &tree(&ws));
    assert_eq!(stats.files_written, 2, "{stats:?}");
    assert_eq!(stats.metadata_fixed, 1, "{stats:?}");
    assert!(
        fs::symlink_metadata(ws.join("ro.txt"))
            .unwrap()
            .permissions()
            .readonly()
    );
    // Again: nothing left to do.
    let again = store.restore(&snap.id, &ws).unwrap();
    assert_eq!((again.files_written, again.removed), (0, 0), "{again:?}");
}

#[cfg(windows)]
#[test]
fn a_file_open_in_another_program_stops_the_rollback_before_anything_changes() {
    use std::os::windows::fs::OpenOptionsExt;
    let (_tmp, ws, store) = setup();
    write(&ws.join("book.xlsx"), b"workbook v1", 0o644);
    write(&ws.join("notes.txt"), b"notes v1", 0o644);
    let snap = store.snapshot(&ws).unwrap();
    write(&ws.join("book.xlsx"), b"workbook v2", 0o644);
    write(&ws.join("notes.txt"), b"notes v2", 0o644);
    write(&ws.join("created.txt"), b"new", 0o644);

    // Another program holds the workbook, sharing nothing.
    let holder = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .share_mode(0)
        .open(ws.join("book.xlsx"))
        .unwrap();
    let err = store.restore(&snap.id, &ws).unwrap_err().to_string();
    assert!(err.contains("\"book.xlsx\""), "{err}");
    assert!(
        err.contains("close it in the program that has it open, then roll back again"),
        "{err}"
    );
    assert!(err.contains("nothing was changed"), "{err}");
    drop(holder);
    assert_eq!(fs::read(ws.join("notes.txt")).unwrap(), b"notes v2");
    assert!(ws.join("created.txt").exists());

    store.restore(&snap.id, &ws).unwrap();
    assert_eq!(fs::read(ws.join("book.xlsx")).unwrap(), b"workbook v1");
    assert_eq!(fs::read(ws.join("notes.txt")).unwrap(), b"notes v1");
    assert!(!ws.join("created.txt").exists());

    // A workbook open but unchanged (readers allowed, as Excel allows) does not stop a rollback
    // of the rest.
    write(&ws.join("notes.txt"), b"notes v3", 0o644);
    let holder = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .share_mode(1) // FILE_SHARE_READ
        .open(ws.join("book.xlsx"))
        .unwrap();
    store.restore(&snap.id, &ws).unwrap();
    assert_eq!(fs::read(ws.join("notes.txt")).unwrap(), b"notes v1");
    drop(holder);

    // A folder to be removed whose file is held.
    write(&ws.join("scratch/held.tmp"), b"x", 0o644);
    let holder = fs::OpenOptions::new()
        .read(true)
        .share_mode(0)
        .open(ws.join("scratch/held.tmp"))
        .unwrap();
    let err = store.restore(&snap.id, &ws).unwrap_err().to_string();
    assert!(err.contains("\"scratch/held.tmp\""), "{err}");
    drop(holder);
    store.restore(&snap.id, &ws).unwrap();
    assert!(!ws.join("scratch").exists());
}

#[cfg(windows)]
#[test]
fn names_differing_only_in_case_are_refused_with_both_named() {
    let (tmp, ws, store) = setup();
    write(&ws.join("a.csv"), b"lower", 0o644);
    let snap = store.snapshot(&ws).unwrap();
    let both = with_extra_entry(&store, tmp.path(), &snap.id, "a.csv", "A.csv");
    write(&ws.join("a.csv"), b"changed", 0o644);

    let err = store.restore(&both, &ws).unwrap_err().to_string();
    assert!(err.contains(r#""a.csv" and "A.csv""#), "{err}");
    assert!(err.contains("differ only in case"), "{err}");
    assert!(err.contains("nothing was changed"), "{err}");
    assert_eq!(fs::read(ws.join("a.csv")).unwrap(), b"changed");
    // The snapshot itself still restores.
    store.restore(&snap.id, &ws).unwrap();
    assert_eq!(fs::read(ws.join("a.csv")).unwrap(), b"lower");
}

#[cfg(windows)]
#[test]
fn a_path_longer_than_260_characters_round_trips() {
    let (_tmp, ws, store) = setup();
    let mut deep = ws.clone();
    for i in 0..6 {
        deep.push(format!("{i}-{}", "long-folder-name-".repeat(3)));
    }
    let file = deep.join("data-file-with-a-long-name-as-well.csv");
    assert!(file.as_os_str().len() > 300, "{}", file.display());
    write(&file, b"far down", 0o644);
    let snap = store.snapshot(&ws).unwrap();
    assert_eq!(snap.stats.files, 1, "{:?}", snap.manifest.skipped);
    let before = tree(&ws);

    write(&file, b"changed far down", 0o644);
    store.restore(&snap.id, &ws).unwrap();
    assert_same_tree(&before, &tree(&ws));
    fs::remove_dir_all(ws.join(ws.read_dir().unwrap().next().unwrap().unwrap().file_name()))
        .unwrap();
    store.restore(&snap.id, &ws).unwrap();
    assert_same_tree(&before, &tree(&ws));
}

#[cfg(windows)]
#[test]
fn links_are_recorded_and_never_written_through() {
    use std::os::windows::fs::{symlink_dir, symlink_file};
    let (tmp, ws, store) = setup();
    let outside = tmp.path().join("outside");
    write(&outside.join("victim.txt"), b"victim", 0o644);
    write(&outside.join("dir/victim.txt"), b"victim too", 0o644);
    write(&ws.join("file.txt"), b"workspace file", 0o644);
    write(&ws.join("dir/inner.txt"), b"workspace dir file", 0o644);
    let made = symlink_file("file.txt", ws.join("link_to_file"));
    if made.is_err() || fs::symlink_metadata(ws.join("link_to_file")).is_err() {
        // No Developer Mode, or Wine (which reports links as made without making them): a
        // snapshot holding a link is refused before anything changes.
        eprintln!("symbolic links cannot be created here ({made:?}); checking the refusal");
        let snap = store.snapshot(&ws).unwrap();
        let linked = with_extra_link(&store, tmp.path(), &snap.id, "file.txt");
        write(&ws.join("file.txt"), b"changed", 0o644);
        let err = store.restore(&linked, &ws).unwrap_err().to_string();
        assert!(err.contains("\"a_link\""), "{err}");
        assert!(err.contains("nothing was changed"), "{err}");
        assert_eq!(fs::read(ws.join("file.txt")).unwrap(), b"changed");
        return;
    }
    symlink_dir(&outside, ws.join("link_out")).unwrap();
    let snap = store.snapshot(&ws).unwrap();
    assert_eq!(snap.stats.symlinks, 2, "{:?}", snap.manifest);
    assert_eq!(snap.stats.files, 2, "nothing read through a link");
    let before = tree(&ws);
    let outside_before = tree(&outside);

    // The agent swaps a file and a folder for links out of the workspace and plants one more.
    fs::remove_file(ws.join("file.txt")).unwrap();
    symlink_file(outside.join("victim.txt"), ws.join("file.txt")).unwrap();
    fs::remove_dir_all(ws.join("dir")).unwrap();
    symlink_dir(outside.join("dir"), ws.join("dir")).unwrap();
    symlink_dir(&outside, ws.join("planted")).unwrap();
    fs::remove_file(ws.join("link_to_file")).unwrap();
    fs::remove_dir(ws.join("link_out")).unwrap();

    store.restore(&snap.id, &ws).unwrap();
    assert_same_tree(&before, &tree(&ws));
    assert_same_tree(&outside_before, &tree(&outside));
    assert!(
        fs::symlink_metadata(ws.join("link_out"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[cfg(windows)]
#[test]
fn names_that_are_not_unicode_round_trip() {
    use std::ffi::OsString;
    use std::os::windows::ffi::OsStringExt;
    let (_tmp, ws, store) = setup();
    // "a", an unpaired surrogate, "%b.txt"
    let name = OsString::from_wide(&[0x61, 0xD800, 0x25, 0x62, 0x2E, 0x74, 0x78, 0x74]);
    let odd = ws.join(&name);
    if let Err(e) = fs::write(&odd, b"odd") {
        eprintln!("this file system cannot hold the name ({e}); skipping");
        return;
    }
    let snap = store.snapshot(&ws).unwrap();
    assert_eq!(snap.stats.skipped, 0, "{:?}", snap.manifest.skipped);
    assert!(
        snap.manifest
            .entries
            .iter()
            .any(|e| e.path() == "a%ED%A0%80%25b.txt"),
        "{:?}",
        snap.manifest.entries
    );
    let before = tree(&ws);
    fs::remove_file(&odd).unwrap();
    store.restore(&snap.id, &ws).unwrap();
    assert_same_tree(&before, &tree(&ws));
}
