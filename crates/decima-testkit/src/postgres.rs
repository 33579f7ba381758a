//! The tests' PostgreSQL server: `scripts/test.sh` starts a cluster of its own under `target/`
//! and exports its URL as `DECIMA_TEST_POSTGRES_URL`. Each test takes a fresh database on it, so
//! tests run in parallel without seeing each other's rows. Without the variable a test panics,
//! naming how to get a server: a test that needs PostgreSQL fails rather than skips.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicU32, Ordering};

use sqlx::Connection;

/// The variable that names the tests' server.
pub const URL_VARIABLE: &str = "DECIMA_TEST_POSTGRES_URL";

/// The server's URL (its maintenance database).
#[must_use]
pub fn server_url() -> String {
    std::env::var(URL_VARIABLE).unwrap_or_else(|_| {
        panic!(
            "{URL_VARIABLE} is not set: this test needs a PostgreSQL server. scripts/test.sh \
             starts one; by hand: `source scripts/lib.sh && start_test_postgres`"
        )
    })
}

/// `url` with its database name replaced by `db`.
#[must_use]
pub fn with_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_part = match base[scheme_end..].find('/') {
        Some(i) => &base[..scheme_end + i],
        None => base,
    };
    match query {
        Some(q) => format!("{host_part}/{db}?{q}"),
        None => format!("{host_part}/{db}"),
    }
}

/// The database every test of a run shares; each test has a schema of its own in it.
const SHARED_DATABASE: &str = "decima_tests";

/// A new, empty schema on the tests' server, named after `label`, the process and a counter;
/// returns a URL whose connections see only it (and the `public` schema, where the shared
/// database keeps `pg_trgm`). A schema is as isolated as a database for the store's tables,
/// and costs a few kilobytes where a database copies its template's megabytes: a run of the
/// suite makes hundreds.
pub async fn fresh_database(label: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let url = server_url();
    let clean: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(30)
        .collect();
    let name = format!(
        "t_{clean}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let shared = ensure_shared_database(&url).await;
    let mut conn = sqlx::PgConnection::connect(&shared)
        .await
        .unwrap_or_else(|e| panic!("cannot reach the tests' PostgreSQL at {shared}: {e}"));
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"
    )))
    .execute(&mut conn)
    .await
    .unwrap_or_else(|e| panic!("cannot create the test schema {name}: {e}"));
    conn.close().await.ok();
    let separator = if shared.contains('?') { '&' } else { '?' };
    format!("{shared}{separator}options=-c%20search_path%3D{name}%2Cpublic")
}

/// The shared database, created (with `pg_trgm`, which the schema's text index needs) by the
/// first test that asks; returns its URL.
async fn ensure_shared_database(url: &str) -> String {
    let shared = with_database(url, SHARED_DATABASE);
    if let Ok(conn) = sqlx::PgConnection::connect(&shared).await {
        conn.close().await.ok();
        return shared;
    }
    let mut admin = sqlx::PgConnection::connect(url)
        .await
        .unwrap_or_else(|e| panic!("cannot reach the tests' PostgreSQL at {url}: {e}"));
    // Several test processes may get here at once: the loser's "already exists" is fine.
    if let Err(e) = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE DATABASE {SHARED_DATABASE}"
    )))
    .execute(&mut admin)
    .await
    {
        let exists = e
            .as_database_error()
            .and_then(|d| d.code())
            .is_some_and(|c| c == "42P04" || c == "23505");
        assert!(exists, "cannot create the tests' database: {e}");
    }
    admin.close().await.ok();
    let mut conn = sqlx::PgConnection::connect(&shared)
        .await
        .unwrap_or_else(|e| panic!("cannot reach {shared}: {e}"));
    for _ in 0..5 {
        match sqlx::raw_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
            .execute(&mut conn)
            .await
        {
            Ok(_) => break,
            // Two creators at once: one wins, the other sees a unique violation; try again.
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
        }
    }
    conn.close().await.ok();
    shared
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_name_is_replaced() {
        assert_eq!(
            with_database("postgres://u@127.0.0.1:5/postgres", "t1"),
            "postgres://u@127.0.0.1:5/t1"
        );
        assert_eq!(
            with_database("postgres://u@h:5/postgres?sslmode=verify-full", "t1"),
            "postgres://u@h:5/t1?sslmode=verify-full"
        );
        assert_eq!(with_database("postgres://u@h", "t1"), "postgres://u@h/t1");
    }
}
