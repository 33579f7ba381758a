#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The snapshot store against real files in temp directories.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::Duration;

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
        mtime: (i64, i64),
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
            let mode = meta.permissions().mode() & 0o7777;
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
                    mtime: (meta.mtime(), meta.mtime_nsec()),
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

fn write(path: &Path, content: &[u8], mode: u32) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, content).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Lets the files just written leave the stat cache's racy window.
fn settle() {
    std::thread::sleep(Duration::from_millis(150));
}

/// A workspace with nested folders, binary and text files, an empty directory, an executable,
/// a read-only file and symlinks (one inside, one dangling, one absolute).
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
    fs::set_permissions(ws.join("nested"), fs::Permissions::from_mode(0o750)).unwrap();
    symlink("src/main.rs", ws.join("link_to_main")).unwrap();
    symlink("does/not/exist", ws.join("dangling")).unwrap();
    symlink("../still", ws.join("src/deep/er/up")).unwrap();
}

fn setup() -> (tempfile::TempDir, PathBuf, SnapshotStore) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("workspace");
    fs::create_dir(&ws).unwrap();
    let store = SnapshotStore::open(tmp.path().join("data/snapshots")).unwrap();
    (tmp, ws, store)
}

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
    rustix::fs::flock(&holder, rustix::fs::FlockOperation::LockShared).unwrap();
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
