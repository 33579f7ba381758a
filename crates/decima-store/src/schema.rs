//! The two schemas (`migrations/sqlite`, `migrations/postgres`) and the rule that a Decima never
//! writes to a schema newer than it knows: the tables a newer build added may carry rules this
//! build would break.

use sqlx::migrate::Migrator;
use sqlx::{PgPool, SqlitePool};

use crate::{Result, StoreError};

/// The SQLite schema, embedded at build time.
pub(crate) static SQLITE: Migrator = sqlx::migrate!("../../migrations/sqlite");

/// The PostgreSQL schema, embedded at build time.
pub(crate) static POSTGRES: Migrator = sqlx::migrate!("../../migrations/postgres");

/// The newest migration a migrator holds.
fn newest(migrator: &Migrator) -> i64 {
    migrator.iter().map(|m| m.version).max().unwrap_or(0)
}

/// The newest schema version this build knows for SQLite and for PostgreSQL.
#[must_use]
pub fn known_versions() -> (i64, i64) {
    (newest(&SQLITE), newest(&POSTGRES))
}

/// Where a database's schema stands against this build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaState {
    /// The newest migration applied to the database (0 when it has none).
    pub applied: i64,
    /// The newest migration this build knows for the database's kind.
    pub known: i64,
    /// Migrations of this build not applied yet.
    pub pending: usize,
}

/// Refuses a database that a newer Decima migrated.
fn refuse_newer(applied: &[i64], migrator: &Migrator) -> Result<SchemaState> {
    let known = newest(migrator);
    let found = applied.iter().copied().max().unwrap_or(0);
    if let Some(unknown) = applied.iter().find(|v| !migrator.version_exists(**v)) {
        return Err(StoreError::SchemaNewer {
            found: found.max(*unknown),
            known,
        });
    }
    let pending = migrator
        .iter()
        .filter(|m| !applied.contains(&m.version))
        .count();
    Ok(SchemaState {
        applied: found,
        known,
        pending,
    })
}

/// The SQLite database's schema state.
pub(crate) async fn sqlite_state(pool: &SqlitePool) -> Result<SchemaState> {
    let has_table: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' \
         AND name = '_sqlx_migrations')",
    )
    .fetch_one(pool)
    .await?;
    let applied: Vec<i64> = if has_table {
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
            .fetch_all(pool)
            .await?
    } else {
        Vec::new()
    };
    refuse_newer(&applied, &SQLITE)
}

/// The PostgreSQL database's schema state.
pub(crate) async fn postgres_state(pool: &PgPool) -> Result<SchemaState> {
    let has_table: bool = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
        .fetch_one(pool)
        .await?;
    let applied: Vec<i64> = if has_table {
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
            .fetch_all(pool)
            .await?
    } else {
        Vec::new()
    };
    refuse_newer(&applied, &POSTGRES)
}

/// Brings a SQLite database up to date (after [`sqlite_state`] found nothing newer).
pub(crate) async fn migrate_sqlite(pool: &SqlitePool) -> Result<()> {
    SQLITE.run(pool).await?;
    Ok(())
}

/// Brings a PostgreSQL database up to date. sqlx holds the database's advisory lock while it
/// migrates, so desktops that run this at once apply each migration once.
pub(crate) async fn migrate_postgres(pool: &PgPool) -> Result<()> {
    POSTGRES.run(pool).await?;
    Ok(())
}
