//! A shared store reached over TLS with `sslmode=verify-full`: the server's certificate must be
//! signed by the CA the URL names and must name the host. The tests' cluster (scripts/lib.sh)
//! has a certificate for 127.0.0.1 only, signed by a CA of its own, and also listens on
//! 127.0.0.2. A wrong CA or a wrong name is refused with an error that says TLS and what to
//! check; nothing falls back to plain text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use decima_core::EstimateCounter;
use decima_store::{Store, StoreError, StoreLocation};

fn ca() -> String {
    std::env::var("DECIMA_TEST_POSTGRES_CA").expect(
        "DECIMA_TEST_POSTGRES_CA names the tests' PostgreSQL CA (scripts/lib.sh start_test_postgres)",
    )
}

async fn connect(url: &str) -> Result<Store, StoreError> {
    Store::connect(
        &StoreLocation::parse(url).unwrap(),
        Arc::new(EstimateCounter),
    )
    .await
}

#[tokio::test]
async fn verify_full_with_the_right_ca_connects_over_tls() {
    let url = decima_testkit::postgres::fresh_database("tls").await;
    let url = format!("{url}&sslmode=verify-full&sslrootcert={}", ca());
    Store::migrate(&StoreLocation::parse(&url).unwrap())
        .await
        .unwrap();
    let store = connect(&url).await.unwrap();
    let ssl: bool = sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .fetch_one(store.postgres_pool().unwrap())
        .await
        .unwrap();
    assert!(ssl, "the connection is encrypted");
    let c = store
        .conversations()
        .create("over tls", None)
        .await
        .unwrap();
    assert_eq!(
        store.conversations().get(c.id).await.unwrap().title,
        "over tls"
    );
}

#[tokio::test]
async fn a_wrong_ca_or_a_wrong_host_is_refused_and_says_tls() {
    let url = decima_testkit::postgres::fresh_database("tls_refused").await;
    // A CA that did not sign the server's certificate.
    let other = tempfile::tempdir().unwrap();
    decima_testkit::tls::make_ca(other.path(), "other");
    let wrong_ca = other.path().join("other-ca.pem");
    let err = connect(&format!(
        "{url}&sslmode=verify-full&sslrootcert={}",
        wrong_ca.display()
    ))
    .await
    .err()
    .expect("a certificate signed by another CA is refused");
    let text = err.to_string();
    assert!(matches!(err, StoreError::Tls { .. }), "{err:?}");
    assert!(
        text.contains("over TLS") && text.contains("sslrootcert"),
        "{text}"
    );
    assert!(
        text.contains("certificate"),
        "the library's reason is kept: {text}"
    );

    // The right CA, but a host the certificate does not name.
    let other_host = url.replace("@127.0.0.1:", "@127.0.0.2:");
    assert_ne!(other_host, url);
    let err = connect(&format!(
        "{other_host}&sslmode=verify-full&sslrootcert={}",
        ca()
    ))
    .await
    .err()
    .expect("a certificate for another host is refused");
    assert!(matches!(err, StoreError::Tls { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("127.0.0.2"), "{text}");

    // A CA file that is not there.
    let err = connect(&format!(
        "{url}&sslmode=verify-full&sslrootcert={}",
        other.path().join("missing.pem").display()
    ))
    .await
    .err()
    .expect("a missing CA file is refused");
    assert!(err.to_string().contains("missing.pem"), "{err}");
}
