//! A tree is ended as a whole: the shell and the program the shell started.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use decima_process::{HostShell, ProcessTree};

/// A script whose grandchild (a second shell the first one starts) appends to `file` for a
/// long time.
fn writer_script(file: &Path) -> String {
    let file = file.display();
    if cfg!(windows) {
        format!("cmd.exe /D /C \"for /L %i in (1,1,1000000) do @echo %i>>{file}\"")
    } else {
        format!("sh -c 'while true; do echo x >> {file}; sleep 0.01; done'")
    }
}

fn size(file: &Path) -> u64 {
    std::fs::metadata(file).map(|m| m.len()).unwrap_or(0)
}

/// Waits until `file` has grown past zero, so the grandchild surely runs.
async fn wait_for_writes(file: &Path) {
    for _ in 0..300 {
        if size(file) > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the grandchild never wrote to {}", file.display());
}

/// After the kill nothing writes any more: the size stays put.
async fn assert_still(file: &Path) {
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = size(file);
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(size(file), before, "a process of the tree still writes");
}

fn spawn(dir: &Path, file: &Path) -> (tokio::process::Child, ProcessTree) {
    let shell = HostShell::system().unwrap();
    let mut call = shell.command(&writer_script(file), dir).unwrap();
    ProcessTree::prepare(&mut call.command);
    call.command
        .current_dir(dir)
        .stdin(std::process::Stdio::null());
    let child = call.command.spawn().unwrap();
    let tree = ProcessTree::adopt(&child).unwrap();
    (child, tree)
}

#[tokio::test]
async fn killing_the_tree_ends_the_grandchild() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let file = dir.join("out.txt");
    let (mut child, mut tree) = spawn(dir, &file);
    wait_for_writes(&file).await;
    tree.kill();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the shell did not end")
        .unwrap();
    // Unix says a signal ended it; Windows' kill-on-close gives no code of its own.
    #[cfg(unix)]
    assert!(!status.success());
    #[cfg(windows)]
    let _ = status;
    assert_still(&file).await;
}

#[tokio::test]
async fn dropping_the_tree_ends_it_and_a_killer_outlives_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let file = dir.join("out.txt");
    let (mut child, tree) = spawn(dir, &file);
    let killer = tree.killer();
    wait_for_writes(&file).await;
    drop(tree);
    tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the shell did not end")
        .unwrap();
    assert_still(&file).await;
    // The tree is gone: its killer does nothing, and says nothing.
    killer.kill();
}

#[tokio::test]
async fn a_killer_ends_a_tree_from_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let file = dir.join("out.txt");
    let (mut child, tree) = spawn(dir, &file);
    wait_for_writes(&file).await;
    let killer = tree.killer();
    std::thread::spawn(move || killer.kill()).join().unwrap();
    tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the shell did not end")
        .unwrap();
    assert_still(&file).await;
    drop(tree);
}
