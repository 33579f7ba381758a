//! Who runs an execution, when the store is shared by several machines (PostgreSQL). A kernel
//! lock on a file (the runtime's own) says it on one machine; machines that share a database
//! cannot see each other's files, so a run holds a lease in the store: an atomic claim with an
//! expiry and an epoch. The holder renews it; when its process dies the lease lapses, and any
//! process on any machine can take the run over. A lease also names its holder's process
//! ([`ProcessIdentity`]): a process on the holder's own machine that finds it gone takes the
//! run over at once, without waiting for the lease to lapse.
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

use crate::process_identity::{GoneHolder, ProcessIdentity};
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
    /// The holder this claim replaced before its lease lapsed, because its process is gone
    /// from this machine; `None` when the lease was free or had lapsed.
    pub took_over: Option<GoneHolder>,
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

    /// Takes the lease of `execution` for `ttl` as this process ([`ProcessIdentity::current`]),
    /// when it is free, has lapsed, or its holder's process is gone from this machine, raising
    /// its epoch. `None` while another holder's lease is live.
    pub async fn claim(
        &self,
        execution: ExecutionId,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<LeaseClaim>> {
        self.claim_as(execution, owner, Some(ProcessIdentity::current()), ttl)
            .await
    }

    /// [`Leases::claim`] for the holder `process` (`None`: a holder never judged gone, whose
    /// lease only lapses): for tests, and a process that claims on another's behalf.
    pub async fn claim_as(
        &self,
        execution: ExecutionId,
        owner: &str,
        process: Option<&ProcessIdentity>,
        ttl: Duration,
    ) -> Result<Option<LeaseClaim>> {
        let pool = self.pool()?;
        let epoch: Option<i64> = Box::pin(
            sqlx::query_scalar(
                "INSERT INTO execution_leases (execution_id, epoch, owner, expires_at, pid, \
                 boot_id, start_time) VALUES ($1, 1, $2, decima_now_ms() + $3, $4, $5, $6) \
                 ON CONFLICT (execution_id) DO UPDATE \
                 SET epoch = execution_leases.epoch + 1, owner = excluded.owner, \
                     expires_at = excluded.expires_at, pid = excluded.pid, \
                     boot_id = excluded.boot_id, start_time = excluded.start_time \
                 WHERE execution_leases.expires_at <= decima_now_ms() \
                 RETURNING epoch",
            )
            .bind(execution.to_string())
            .bind(owner)
            .bind(millis(ttl))
            .bind(process.map(ProcessIdentity::pid_column))
            .bind(process.and_then(|p| p.boot_id.clone()))
            .bind(process.and_then(ProcessIdentity::start_time_column))
            .fetch_optional(pool),
        )
        .await?;
        let claim = |epoch, took_over| LeaseClaim {
            execution,
            epoch,
            owner: owner.to_owned(),
            took_over,
        };
        if let Some(epoch) = epoch {
            return Ok(Some(claim(epoch, None)));
        }
        Ok(self
            .take_from_gone(execution, owner, process, ttl)
            .await?
            .map(|(epoch, gone)| claim(epoch, Some(gone))))
    }

    /// Takes a live lease whose holder's process is gone from this machine, only if it still
    /// has the epoch it was judged at (so two claimants cannot both take it).
    async fn take_from_gone(
        &self,
        execution: ExecutionId,
        owner: &str,
        process: Option<&ProcessIdentity>,
        ttl: Duration,
    ) -> Result<Option<(i64, GoneHolder)>> {
        let pool = self.pool()?;
        type HolderRow = (i64, String, Option<i64>, Option<String>, Option<i64>);
        let row: Option<HolderRow> = Box::pin(
            sqlx::query_as(
                "SELECT epoch, owner, pid, boot_id, start_time FROM execution_leases \
                 WHERE execution_id = $1 AND expires_at > decima_now_ms()",
            )
            .bind(execution.to_string())
            .fetch_optional(pool),
        )
        .await?;
        let Some((seen, holder_owner, pid, boot_id, start_time)) = row else {
            return Ok(None);
        };
        let Some(gone) = ProcessIdentity::from_columns(pid, boot_id, start_time)
            .and_then(|p| GoneHolder::judged(&p, holder_owner))
        else {
            return Ok(None);
        };
        let epoch: Option<i64> = Box::pin(
            sqlx::query_scalar(
                "UPDATE execution_leases SET epoch = epoch + 1, owner = $1, \
                 expires_at = decima_now_ms() + $2, pid = $3, boot_id = $4, start_time = $5 \
                 WHERE execution_id = $6 AND epoch = $7 RETURNING epoch",
            )
            .bind(owner)
            .bind(millis(ttl))
            .bind(process.map(ProcessIdentity::pid_column))
            .bind(process.and_then(|p| p.boot_id.clone()))
            .bind(process.and_then(ProcessIdentity::start_time_column))
            .bind(execution.to_string())
            .bind(seen)
            .fetch_optional(pool),
        )
        .await?;
        if epoch.is_some() {
            tracing::info!(%execution, pid = gone.pid, pid_reused = gone.pid_reused,
                "run lease taken over from a process that is gone");
        }
        Ok(epoch.map(|epoch| (epoch, gone)))
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
