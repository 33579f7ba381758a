//! A Decima never writes to a schema newer than it knows, on either backend; a shared database
//! is migrated by an explicit act, under the database's migration lock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;

use decima_core::EstimateCounter;
use decima_store::{Store, StoreError, StoreLocation, known_versions};

/// A version no build of Decima has reached.
const FUTURE: i64 = 29_991_231_000_000;

const RECORD_FUTURE: &str = "INSERT INTO _sqlx_migrations \
    (version, description, success, checksum, execution_time) \
    VALUES (29991231000000, 'from the future', TRUE, ''::bytea, 1)";

#[tokio::test]
async fn a_sqlite_file_from_a_newer_decima_is_refused_and_left_alone() {
    let (dir, store) = common::temp_sqlite_store().await;
    let conversation = store.conversations().create("kept", None).await.unwrap();
    let pool = store.sqlite_pool().unwrap();
    sqlx::query(sqlx::AssertSqlSafe(
        RECORD_FUTURE.replace("''::bytea", "x''"),
    ))
    .execute(pool)
    .await
    .unwrap();
    store.close().await;

    let path = dir.path().join("decima.db");
    let err = Store::open(&path, Arc::new(EstimateCounter))
        .await
        .err()
        .expect("a newer schema is refused");
    let (known, _) = known_versions();
    assert!(
        matches!(err, StoreError::SchemaNewer { found: FUTURE, known: k } if k == known),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&FUTURE.to_string()) && text.contains(&known.to_string()),
        "{text}"
    );
    assert!(text.contains("Update Decima"), "{text}");

    // Nothing was changed: with the future's record gone, the conversation is still there.
    let raw = sqlx::SqlitePool::connect(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    sqlx::query("DELETE FROM _sqlx_migrations WHERE version = 29991231000000")
        .execute(&raw)
        .await
        .unwrap();
    raw.close().await;
    let store = common::open(&path).await;
    assert_eq!(
        store
            .conversations()
            .get(conversation.id)
            .await
            .unwrap()
            .title,
        "kept"
    );
}

#[tokio::test]
async fn a_shared_database_is_migrated_on_purpose_and_a_newer_one_refused() {
    let url = decima_testkit::postgres::fresh_database("schema_versions").await;
    let location = StoreLocation::parse(&url).unwrap();
    let (_, known) = known_versions();

    // An empty database: opening it says what to run.
    let err = Store::connect(&location, Arc::new(EstimateCounter))
        .await
        .err()
        .expect("an empty shared database is not opened");
    assert!(
        matches!(err, StoreError::SchemaBehind { found: 0, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("decima db migrate"), "{err}");

    // Two desktops migrating at once: the lock lets each migration run once.
    let (a, b) = tokio::join!(Store::migrate(&location), Store::migrate(&location));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.1.applied, known);
    assert_eq!(b.1.applied, known);
    assert_eq!(a.1.pending + b.1.pending, 0);
    assert!(
        [a.0.applied, b.0.applied].contains(&0),
        "one of them found the database empty"
    );
    let again = Store::migrate(&location).await.unwrap();
    assert_eq!((again.0.applied, again.0.pending), (known, 0));

    let store = Store::connect(&location, Arc::new(EstimateCounter))
        .await
        .unwrap();
    assert!(store.is_postgres());
    assert_eq!(store.integrity_check().await.unwrap(), "ok");
    sqlx::query(RECORD_FUTURE)
        .execute(store.postgres_pool().unwrap())
        .await
        .unwrap();
    store.close().await;

    for err in [
        Store::connect(&location, Arc::new(EstimateCounter))
            .await
            .err()
            .unwrap(),
        Store::migrate(&location).await.err().unwrap(),
    ] {
        assert!(
            matches!(err, StoreError::SchemaNewer { found: FUTURE, known: k } if k == known),
            "{err:?}"
        );
    }
}

#[tokio::test]
async fn an_unreachable_server_is_named_without_its_password() {
    // A port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let location =
        StoreLocation::parse(&format!("postgres://ana:s3cret@127.0.0.1:{port}/decima")).unwrap();
    let err = Store::connect(&location, Arc::new(EstimateCounter))
        .await
        .err()
        .expect("nothing listens there");
    let text = err.to_string();
    assert!(matches!(err, StoreError::Connect { .. }), "{err:?}");
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
    assert!(!text.contains("s3cret"), "{text}");
}
