//! A run's lease on a shared PostgreSQL store names its holder's process: a process on the same
//! boot takes the run over at once when that process is gone (with a higher epoch, so the old
//! holder's fence refuses it), while a live holder, or one on another machine, keeps the lease
//! until it lapses. Needs the tests' PostgreSQL server, as `run_leases` does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use decima_core::{EstimateCounter, ExecutionId};
use decima_store::{ProcessIdentity, Store, StoreLocation};

const LONG: Duration = Duration::from_secs(60);

async fn shared() -> Store {
    let url = decima_testkit::postgres::fresh_database("lease_process").await;
    let location = StoreLocation::parse(&url).unwrap();
    Store::migrate(&location).await.unwrap();
    Store::connect(&location, Arc::new(EstimateCounter))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_of_a_gone_process_on_this_boot_is_taken_over_at_once() {
    let store = shared().await;
    let leases = store.leases();
    let mut child = Command::new("sleep").arg("600").spawn().unwrap();
    let runner = ProcessIdentity::of(child.id()).unwrap();
    let id = ExecutionId::new();
    let first = leases
        .claim_as(id, "the runner", Some(&runner), LONG)
        .await
        .unwrap()
        .unwrap();
    // Alive: refused, as a second runner always was.
    assert_eq!(leases.claim(id, "me", LONG).await.unwrap(), None);

    child.kill().unwrap();
    child.wait().unwrap();
    let started = std::time::Instant::now();
    let taken = leases.claim(id, "me", LONG).await.unwrap().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(taken.epoch, first.epoch + 1);
    let gone = taken
        .took_over
        .clone()
        .expect("told it took the lease over");
    assert_eq!((gone.pid, gone.owner.as_str()), (runner.pid, "the runner"));
    assert!(!leases.renew(&first, LONG).await.unwrap());
    // Now held by this process, which runs: nobody takes it from here.
    assert_eq!(leases.claim(id, "another", LONG).await.unwrap(), None);
    assert_eq!(leases.holder(id).await.unwrap().unwrap().owner, "me");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_from_another_machine_waits_for_its_lapse() {
    let store = shared().await;
    let leases = store.leases();
    let mut child = Command::new("sleep").arg("600").spawn().unwrap();
    let elsewhere = ProcessIdentity {
        boot_id: Some("another-machine pid:[1]".into()),
        ..ProcessIdentity::of(child.id()).unwrap()
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let id = ExecutionId::new();
    let short = Duration::from_millis(400);
    leases
        .claim_as(id, "there", Some(&elsewhere), short)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(leases.claim(id, "me", LONG).await.unwrap(), None);
    tokio::time::sleep(short + Duration::from_millis(200)).await;
    let taken = leases.claim(id, "me", LONG).await.unwrap().unwrap();
    assert_eq!(taken.took_over, None, "it lapsed");
}
