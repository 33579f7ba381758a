//! A claim names its holder's process, and a claimant on the same boot takes the claim over at
//! once when that process is gone: a pid no process has, a zombie, or a pid that now belongs to
//! a process with another start time. A live holder (this test's process, a `sleep` child), a
//! holder on another boot, and a holder that named no process are refused until their claim
//! lapses. Real processes throughout; on SQLite, and on PostgreSQL with
//! `DECIMA_TEST_STORE=postgres`.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::process::{Child, Command};
use std::time::Duration;

use decima_core::{ConversationId, ExecutionId};
use decima_store::{
    Claim, ClaimKind, Holder, NewExecution, ProcessIdentity, SandboxKind, Store, StoreError,
    this_boot_id,
};

const MINUTE: Duration = Duration::from_secs(60);

fn sleeper() -> Child {
    Command::new("sleep").arg("600").spawn().unwrap()
}

/// The identity a process had while it ran, and then its pid freed: spawned, named, ended and
/// reaped.
fn ended_process() -> ProcessIdentity {
    let mut child = sleeper();
    let identity = ProcessIdentity::of(child.id()).expect("a running child");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        ProcessIdentity::of(identity.pid).is_none(),
        "pid {} was reused at once",
        identity.pid
    );
    identity
}

async fn conversation(store: &Store) -> ConversationId {
    store.conversations().create("c", None).await.unwrap().id
}

async fn hold(store: &Store, c: ConversationId, process: &ProcessIdentity, ttl: Duration) -> Claim {
    let owner = format!("process {} on here", process.pid);
    store
        .claims()
        .claim_as(c, ClaimKind::Chat, &owner, Some(process), ttl)
        .await
        .unwrap()
}

/// Claims `c` as this process; the conversation must be found busy by a chat claim.
async fn refused(store: &Store, c: ConversationId) {
    match store
        .claims()
        .claim(c, ClaimKind::Compression, "me", MINUTE)
        .await
    {
        Err(StoreError::Busy(busy)) => assert!(
            matches!(
                busy.holder,
                Holder::Claim {
                    kind: ClaimKind::Chat,
                    ..
                }
            ),
            "{busy:?}"
        ),
        other => panic!("expected the conversation to be busy, got {other:?}"),
    }
    assert!(store.claims().busy(c).await.unwrap().is_some());
}

async fn claim_rows(store: &Store, c: ConversationId) -> i64 {
    let id = c.to_string();
    common::scalar(
        store,
        "SELECT COUNT(*) FROM conversation_claims WHERE conversation_id = $1",
        &[&id],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_by_a_pid_gone_from_this_boot_is_taken_over_at_once_with_a_note() {
    assert!(this_boot_id().is_some(), "this test needs Linux's boot id");
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let dead = ended_process();
    let old = hold(&store, c, &dead, MINUTE).await;
    assert_eq!(old.took_over, None);
    // Free for the window's Send button, although the claim has most of its minute left.
    assert_eq!(store.claims().busy(c).await.unwrap(), None);

    let started = std::time::Instant::now();
    let new = store
        .claims()
        .claim(c, ClaimKind::Chat, "me", MINUTE)
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    let gone = new.took_over.clone().expect("told it took the claim over");
    assert_eq!(gone.pid, dead.pid);
    assert!(!gone.pid_reused);
    assert_eq!(gone.owner, format!("process {} on here", dead.pid));
    assert_eq!(
        new.take_over_note().unwrap(),
        format!(
            "took over the conversation from process {}, which is no longer running",
            dead.pid
        )
    );
    // The dead holder's token renews and frees nothing; the new holder is recorded as this
    // process, so it is refused to everyone else while this test lives.
    assert!(!store.claims().renew(&old, MINUTE).await.unwrap());
    store.claims().release(&old).await.unwrap();
    refused_by_self(&store, c).await;
    store.claims().release(&new).await.unwrap();
    assert_eq!(claim_rows(&store, c).await, 0);
}

/// Claims `c` once more as this process, which holds it: refused, since this process runs.
async fn refused_by_self(store: &Store, c: ConversationId) {
    assert!(matches!(
        store
            .claims()
            .claim(c, ClaimKind::Chat, "me again", MINUTE)
            .await,
        Err(StoreError::Busy(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_holder_is_refused_and_taken_over_once_it_is_killed() {
    let (_dir, store) = common::temp_store().await;
    // This test's own process.
    let c = conversation(&store).await;
    let me = hold(&store, c, ProcessIdentity::current(), MINUTE).await;
    refused(&store, c).await;
    store.claims().release(&me).await.unwrap();

    // A `sleep` child: refused while it runs; once killed, its zombie (not reaped yet) holds
    // nothing.
    let c = conversation(&store).await;
    let mut child = sleeper();
    let identity = ProcessIdentity::of(child.id()).unwrap();
    assert!(identity.start_time.is_some());
    hold(&store, c, &identity, MINUTE).await;
    refused(&store, c).await;
    child.kill().unwrap();
    wait_for_zombie(child.id()).await;
    let taken = store
        .claims()
        .claim(c, ClaimKind::Compression, "me", MINUTE)
        .await;
    child.wait().unwrap();
    let taken = taken.unwrap();
    assert_eq!(taken.took_over.map(|g| g.pid), Some(identity.pid));
}

/// Waits until `pid` is a zombie (killed, not yet reaped).
async fn wait_for_zombie(pid: u32) {
    for _ in 0..200 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        if stat
            .rsplit_once(')')
            .unwrap()
            .1
            .trim_start()
            .starts_with('Z')
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{pid} did not become a zombie");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pid_that_now_belongs_to_another_process_is_taken_over() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    // This test's pid, alive, but recorded with another start time: what a reused pid looks
    // like from here.
    let me = ProcessIdentity::current();
    let earlier = ProcessIdentity {
        start_time: Some(me.start_time.expect("a start time on Linux") - 1),
        ..me.clone()
    };
    hold(&store, c, &earlier, MINUTE).await;
    let taken = store
        .claims()
        .claim(c, ClaimKind::Chat, "me", MINUTE)
        .await
        .unwrap();
    let gone = taken.took_over.clone().expect("taken over");
    assert!(gone.pid_reused);
    assert!(
        taken.take_over_note().unwrap().ends_with(
            "which is no longer running (its process id now belongs to another process)"
        ),
        "{:?}",
        taken.take_over_note()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_on_another_boot_or_unnamed_waits_until_its_claim_lapses() {
    let (_dir, store) = common::temp_store().await;
    let short = Duration::from_millis(400);
    // Another machine: its pid means nothing here, even one no process has on this boot.
    let elsewhere = ProcessIdentity {
        boot_id: Some("another-machine pid:[1]".into()),
        ..ended_process()
    };
    // An older Decima's claim, which named no process.
    for holder in [Some(&elsewhere), None] {
        let c = conversation(&store).await;
        let old = store
            .claims()
            .claim_as(c, ClaimKind::Chat, "process 1 on there", holder, short)
            .await
            .unwrap();
        refused(&store, c).await;
        tokio::time::sleep(short + Duration::from_millis(200)).await;
        let new = store
            .claims()
            .claim(c, ClaimKind::Chat, "me", MINUTE)
            .await
            .unwrap();
        assert_eq!(new.took_over, None, "it lapsed: nothing was taken over");
        assert!(!store.claims().renew(&old, MINUTE).await.unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_starts_over_a_gone_holders_claim_and_removes_it() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    hold(&store, c, &ended_process(), MINUTE).await;
    assert_eq!(claim_rows(&store, c).await, 1);
    store
        .executions()
        .start(
            ExecutionId::new(),
            &NewExecution {
                conversation_id: c,
                parent_id: None,
                depth: 0,
                task: "t".into(),
                sandbox: SandboxKind::Host,
                provider_id: None,
                workspace: None,
                options: serde_json::json!({}),
            },
        )
        .await
        .unwrap();
    assert_eq!(
        claim_rows(&store, c).await,
        0,
        "the gone holder's claim is removed"
    );
}
