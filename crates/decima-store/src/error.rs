//! The one error type of decima-store.

use std::path::PathBuf;

use decima_core::CoreError;
use thiserror::Error;

/// Why a store operation failed, worded for the person who has to act on it.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The data directory cannot be created or is not a directory.
    #[error("cannot use the data directory {}: {reason}", path.display())]
    DataDir {
        /// The directory.
        path: PathBuf,
        /// Why not.
        reason: String,
    },
    /// The file could not be opened or is not a Decima database.
    #[error("cannot open the database {}: {source}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        source: sqlx::Error,
    },
    /// The PostgreSQL server could not be reached, refused the login or the TLS handshake.
    #[error("cannot reach the database {url}: {source}")]
    Connect {
        /// The database's URL, without its password.
        url: String,
        /// What the driver said.
        source: sqlx::Error,
    },
    /// The TLS handshake with the database failed: a wrong CA, a certificate that does not
    /// name the host, or no TLS on the server. Decima never falls back to plain text.
    #[error(
        "cannot reach the database {url} over TLS: {detail}. Check that sslrootcert names the \
         CA file that signed the server's certificate, and that the certificate names the host \
         in the URL"
    )]
    Tls {
        /// The database's URL, without its password.
        url: String,
        /// What the TLS library said.
        detail: String,
    },
    /// A newer Decima migrated this database: this build would not know its rules, so it
    /// neither writes nor reads it.
    #[error(
        "this database's schema is version {found}, newer than this Decima knows (up to \
         {known}): a newer Decima has used it. Update Decima to open it; nothing was changed"
    )]
    SchemaNewer {
        /// The newest migration applied to the database.
        found: i64,
        /// The newest migration this build knows.
        known: i64,
    },
    /// A shared database whose schema is older than this build needs. Migrating a database
    /// others use is an explicit act, so it is not done on open.
    #[error(
        "the shared database's schema is {}, and this Decima needs version {known}: run \
         `decima db migrate --database-url <URL>` once (it holds the database's migration lock, \
         so it is safe while others are connected)",
        if *.found == 0 { "empty".to_owned() } else { format!("at version {}", .found) }
    )]
    SchemaBehind {
        /// The newest migration applied to the database (0: none).
        found: i64,
        /// The newest migration this build knows.
        known: i64,
    },
    /// The schema could not be brought up to date (for example, a newer Decima wrote this file).
    #[error("cannot update the database schema: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The thing asked for does not exist, or was deleted.
    #[error("{entity} {id} was not found")]
    NotFound {
        /// What kind of thing, e.g. "conversation".
        entity: &'static str,
        /// Its id, or a description such as "seq 12 of conversation …".
        id: String,
    },
    /// Input that the domain rules refuse.
    #[error(transparent)]
    Invalid(#[from] CoreError),
    /// Input the store refuses, such as an empty title.
    #[error("{0}")]
    InvalidInput(String),
    /// The row exists, but its state refuses the change: a finished execution asked to run
    /// again, a failure resolved twice. Retrying the same call cannot succeed.
    #[error("{0}")]
    Conflict(String),
    /// The conversation is in use by something else (an active execution, a chat turn, a
    /// compression): nothing was stored. The holder is named so the person can wait for it or
    /// stop it.
    #[error("{0}")]
    Busy(Box<crate::claims::Busy>),
    /// A row that does not decode: the file was edited by hand or by a foreign tool.
    #[error("the database holds a malformed {what}: {detail}")]
    Corrupt {
        /// Which column or row kind.
        what: &'static str,
        /// The decoding problem.
        detail: String,
    },
    /// The run's lease was taken over by another process (it lapsed while this one was
    /// paused or cut off): this runner may not write any more, and nothing was stored.
    #[error(
        "{0}; this process stopped writing, and the run continues where it was taken over \
         (see `decima execution show`)"
    )]
    LeaseLost(String),
    /// Any other database failure.
    #[error("database error: {0}")]
    Database(sqlx::Error),
}

/// The SQLSTATE the fence trigger raises (`migrations/postgres/…_run_leases.sql`).
const LEASE_LOST: &str = "DL001";

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match e.as_database_error() {
            Some(db) if db.code().as_deref() == Some(LEASE_LOST) => {
                Self::LeaseLost(db.message().to_owned())
            }
            _ => Self::Database(e),
        }
    }
}

impl StoreError {
    pub(crate) fn not_found(entity: &'static str, id: impl ToString) -> Self {
        Self::NotFound {
            entity,
            id: id.to_string(),
        }
    }
}
