//! Who runs an execution, when the store is shared by several machines (PostgreSQL). A kernel
//! lock on a file (the runtime's own) says it on one machine; machines that share a database
//! cannot see each other's files, so a run holds a lease in the store: an atomic claim with an
//! expiry and an epoch. The holder renews it; when its process dies the lease lapses, and any
//! process on any machine can take the run over.
//!
//! Taking a run over must also stop the old holder, which may only be paused (a laptop's lid,
//! a stalled network) and wake up later. So every write a runner makes goes through a fenced
//! [`Store`] ([`Store::fenced`]): its connections carry the lease's execution and epoch, and a
//! trigger on every table refuses a statement whose epoch no longer holds the lease
//! ([`StoreError::LeaseLost`]). Epochs only grow, so a fence is never valid twice.
//!
//! On SQLite these calls are refused: the file lives on one machine, where the kernel's lock
//! already says who runs what.

use std::time::Duration;

use decima_core::ExecutionId;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

use crate::{Backend, Result, Store, StoreError};

/// Connections a fenced store may open: a runner writes from its loop, its heartbeat and the
/// digests it starts in the background, rarely more than two at once.
const FENCED_CONNECTIONS: u32 = 3;

/// A held lease: what a fence is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseClaim {
    /// The execution the lease is for.
    pub execution: ExecutionId,
    /// The claim's epoch: higher than every earlier holder's.
    pub epoch: i64,
    /// Who holds it, as the holder described itself (process and host).
    pub owner: String,
}

impl LeaseClaim {
    /// The value of the `decima.fence` setting its connections carry.
    fn fence(&self) -> String {
        format!("{}/{}", self.execution, self.epoch)
    }
}

/// Someone else's live lease, for the message that refuses a second runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHolder {
    /// Who holds it.
    pub owner: String,
    /// How long until it lapses unless renewed, by the server's clock.
    pub lapses_in: Duration,
}

/// The leases of runs on a shared store.
pub struct Leases<'s> {
    store: &'s Store,
}

impl<'s> Leases<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    fn pool(&self) -> Result<&PgPool> {
        match self.store.backend() {
            Backend::Postgres(pool) => Ok(pool),
            Backend::Sqlite(_) => Err(StoreError::InvalidInput(
                "run leases live in a shared PostgreSQL store; on SQLite a run is owned through \
                 its lock file"
                    .into(),
            )),
        }
    }

    /// Takes the lease of `execution` for `ttl`, when it is free or has lapsed, raising its
    /// epoch. `None` while another holder's lease is live.
    pub async fn claim(
        &self,
        execution: ExecutionId,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<LeaseClaim>> {
        let pool = self.pool()?;
        let epoch: Option<i64> = Box::pin(
            sqlx::query_scalar(
                "INSERT INTO execution_leases (execution_id, epoch, owner, expires_at) \
                 VALUES ($1, 1, $2, decima_now_ms() + $3) \
                 ON CONFLICT (execution_id) DO UPDATE \
                 SET epoch = execution_leases.epoch + 1, owner = excluded.owner, \
                     expires_at = excluded.expires_at \
                 WHERE execution_leases.expires_at <= decima_now_ms() \
                 RETURNING epoch",
            )
            .bind(execution.to_string())
            .bind(owner)
            .bind(millis(ttl))
            .fetch_optional(pool),
        )
        .await?;
        Ok(epoch.map(|epoch| LeaseClaim {
            execution,
            epoch,
            owner: owner.to_owned(),
        }))
    }

    /// Keeps a held lease for `ttl` more. False when it is no longer this claim's: another
    /// process took it over after it lapsed.
    pub async fn renew(&self, claim: &LeaseClaim, ttl: Duration) -> Result<bool> {
        let pool = self.pool()?;
        let done = Box::pin(
            sqlx::query(
                "UPDATE execution_leases SET expires_at = decima_now_ms() + $1 \
                 WHERE execution_id = $2 AND epoch = $3",
            )
            .bind(millis(ttl))
            .bind(claim.execution.to_string())
            .bind(claim.epoch)
            .execute(pool),
        )
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Lets a held lease lapse now, so another process may take the run at once. The row and
    /// its epoch stay: the next claim raises it.
    pub async fn release(&self, claim: &LeaseClaim) -> Result<()> {
        let pool = self.pool()?;
        Box::pin(
            sqlx::query(
                "UPDATE execution_leases SET expires_at = 0 \
                 WHERE execution_id = $1 AND epoch = $2",
            )
            .bind(claim.execution.to_string())
            .bind(claim.epoch)
            .execute(pool),
        )
        .await?;
        Ok(())
    }

    /// The live lease of `execution`, if someone holds one.
    pub async fn holder(&self, execution: ExecutionId) -> Result<Option<LeaseHolder>> {
        let pool = self.pool()?;
        let row: Option<(String, i64)> = Box::pin(
            sqlx::query_as(
                "SELECT owner, expires_at - decima_now_ms() FROM execution_leases \
                 WHERE execution_id = $1 AND expires_at > decima_now_ms()",
            )
            .bind(execution.to_string())
            .fetch_optional(pool),
        )
        .await?;
        Ok(row.map(|(owner, left)| LeaseHolder {
            owner,
            lapses_in: Duration::from_millis(u64::try_from(left).unwrap_or(0)),
        }))
    }
}

impl Store {
    /// Run leases on a shared store.
    pub fn leases(&self) -> Leases<'_> {
        Leases::new(self)
    }

    /// A store whose every write is refused once `claim` no longer holds its lease: what a
    /// runner writes through. Its own small pool, on the same server and database, with the
    /// fence set on each connection at start-up. On SQLite, the store itself.
    pub async fn fenced(&self, claim: &LeaseClaim) -> Result<Store> {
        let Backend::Postgres(pool) = self.backend() else {
            return Ok(self.clone());
        };
        let unfenced = self
            .unfenced
            .clone()
            .unwrap_or_else(|| pool.connect_options());
        let options = unfenced
            .as_ref()
            .clone()
            .options([("decima.fence", claim.fence())]);
        let fenced = PgPoolOptions::new()
            .max_connections(FENCED_CONNECTIONS)
            .min_connections(0)
            .idle_timeout(Duration::from_secs(60))
            .acquire_timeout(pool.options().get_acquire_timeout())
            .connect_with(options);
        let fenced = Box::pin(fenced).await?;
        Ok(self.with_backend(Backend::Postgres(fenced)))
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 2)
}
