//! Connecting to a team's PostgreSQL database.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection, PgPool};

use crate::{Result, StoreError};

/// Connections per process: a desktop runs a few agent loops and a window, each mostly waiting
/// on a model, so a handful is plenty, and a team of desktops stays far below the server's
/// `max_connections` (100 by default).
const MAX_CONNECTIONS: u32 = 8;

/// How long to wait for the server before saying it cannot be reached.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens a pool on `url` (a `postgres://` URL with libpq's parameters: `sslmode`,
/// `sslrootcert`, `options`, …). Nothing is read or written yet.
pub(crate) async fn connect(url: &str, shown: &str) -> Result<PgPool> {
    let connect_error = |source: sqlx::Error| match source {
        sqlx::Error::Tls(e) => StoreError::Tls {
            url: shown.to_owned(),
            detail: error_chain(e.as_ref()),
        },
        source => StoreError::Connect {
            url: shown.to_owned(),
            source,
        },
    };
    let options = PgConnectOptions::from_str(url)
        .map_err(connect_error)?
        .application_name("decima");
    // One connection first: the pool retries a refused connection until its timeout, and the
    // analyst should hear at once that the server is not there, with the driver's reason.
    let probe = sqlx::PgConnection::connect_with(&options)
        .await
        .map_err(connect_error)?;
    probe.close().await.ok();
    // Lazily: the probe has just shown the server answers, and every connection costs a TLS
    // set-up (native-tls loads the system's CA bundle each time, tens of milliseconds), which a
    // short CLI command would otherwise pay once more for a connection the pool opens only to
    // check what the probe checked.
    Ok(PgPoolOptions::new()
        .max_connections(MAX_CONNECTIONS)
        .acquire_timeout(CONNECT_TIMEOUT)
        .connect_lazy_with(options))
}

/// An error with its causes, "outer: inner: innermost", so the certificate's complaint shows.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
}
