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

/// A new, empty database on the tests' server, named after `label`, the process and a counter;
/// returns its URL.
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
    let mut conn = sqlx::PgConnection::connect(&url)
        .await
        .unwrap_or_else(|e| panic!("cannot reach the tests' PostgreSQL at {url}: {e}"));
    // One statement each: several in one string run as a transaction, which these refuse.
    for statement in [
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(statement))
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("cannot create the test database {name}: {e}"));
    }
    conn.close().await.ok();
    with_database(&url, &name)
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
