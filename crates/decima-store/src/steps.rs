//! Steps: the per-step record of an execution (what it analysed, did and checked), numbered
//! per execution without gaps.

use decima_core::{ExecutionId, Timestamp};
use sqlx::FromRow;

use crate::on_pool;
use crate::rows::corrupt;
use crate::{Result, Store, StoreError};

/// What a step was, as stored in `steps.kind`. Summary rows are made by compression, not here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum StepKind {
    /// The model reasoned about what to do.
    Analysis,
    /// A tool ran.
    Action,
    /// A supervisor (or the tenth man) checked the work.
    Supervision,
}

impl StepKind {
    /// The text stored in `steps.kind`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A stored step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Its id (UUIDv7 text).
    pub id: String,
    /// The execution.
    pub execution_id: ExecutionId,
    /// Its number within the execution, from 1.
    pub seq: i64,
    /// `analysis`, `action`, `supervision`, or `summary` for a folded batch.
    pub kind: String,
    /// What happened.
    pub content: String,
    /// The content's token count, counted once here.
    pub tokens: u32,
    /// When it was recorded.
    pub created_at: Timestamp,
}

#[derive(FromRow)]
struct StepRow {
    id: String,
    execution_id: String,
    seq: i64,
    kind: String,
    content: String,
    tokens: i64,
    created_at: i64,
}

impl TryFrom<StepRow> for Step {
    type Error = StoreError;

    fn try_from(row: StepRow) -> Result<Self> {
        Ok(Step {
            execution_id: row
                .execution_id
                .parse()
                .map_err(|e| corrupt("execution id", e))?,
            tokens: u32::try_from(row.tokens).map_err(|e| corrupt("step tokens", e))?,
            id: row.id,
            seq: row.seq,
            kind: row.kind,
            content: row.content,
            created_at: Timestamp(row.created_at),
        })
    }
}

/// Step operations, borrowed from a [`Store`].
pub struct Steps<'s> {
    store: &'s Store,
}

impl<'s> Steps<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Records a step with the next seq of its execution. One `INSERT … SELECT` statement, so
    /// the seq is read and taken under the same write lock and two writers cannot collide.
    pub async fn record(
        &self,
        execution: ExecutionId,
        kind: StepKind,
        content: &str,
    ) -> Result<Step> {
        on_pool!(self.store, |pool, d| {
            insert_step(self.store, pool, execution, kind, content).await
        })
    }

    /// Records several steps at once, in order, in one statement: a step's analysis and action
    /// are written together or not at all, in one round trip. Each row takes the execution's
    /// highest seq plus its place in the batch; SQLite evaluates an `INSERT … SELECT` that
    /// reads its own table completely before it inserts, so the batch is numbered gaplessly.
    pub async fn record_all(
        &self,
        execution: ExecutionId,
        records: &[(StepKind, &str)],
    ) -> Result<Vec<Step>> {
        if records.is_empty() {
            return Ok(Vec::new());
        }
        let pool = match self.store.backend() {
            crate::Backend::Sqlite(pool) => pool,
            crate::Backend::Postgres(pool) => {
                // The run that records them holds its execution, so one row at a time in one
                // transaction numbers them as the single statement does on SQLite.
                return Box::pin(async {
                    let mut tx = pool.begin().await?;
                    let mut steps = Vec::with_capacity(records.len());
                    for (kind, content) in records {
                        steps.push(
                            insert_step(self.store, &mut *tx, execution, *kind, content).await?,
                        );
                    }
                    tx.commit().await?;
                    Ok(steps)
                })
                .await;
            }
        };
        let created_at = Timestamp::now();
        let Some(sql) = records_sql(records.len(), "") else {
            return Ok(Vec::new());
        };
        let mut rows = Vec::with_capacity(records.len());
        // The text depends only on how many records there are; every value is bound.
        let mut query = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql));
        for (kind, content) in records {
            let id = uuid::Uuid::now_v7().to_string();
            let tokens = self.store.counter().count_text(content);
            query = bind_record(query, &id, *kind, content, tokens, created_at, execution);
            rows.push((id, *kind, *content, tokens));
        }
        let mut seqs = query.fetch_all(pool).await?;
        if seqs.len() != records.len() {
            return Err(StoreError::not_found("execution", execution));
        }
        seqs.sort_unstable();
        Ok(rows
            .into_iter()
            .zip(seqs)
            .map(|((id, kind, content, tokens), seq)| Step {
                id,
                execution_id: execution,
                seq,
                kind: kind.as_str().to_owned(),
                content: content.to_owned(),
                tokens,
                created_at,
            })
            .collect())
    }

    /// Every step of an execution that is not folded into a summary, in seq order.
    pub async fn list(&self, execution: ExecutionId) -> Result<Vec<Step>> {
        let rows: Vec<StepRow> = on_pool!(self.store, |pool, d| sqlx::query_as(
            "SELECT id, execution_id, seq, kind, content, tokens, created_at FROM steps \
             WHERE execution_id = $1 AND superseded_by IS NULL ORDER BY seq",
        )
        .bind(execution.to_string())
        .fetch_all(pool)
        .await)?;
        rows.into_iter().map(Step::try_from).collect()
    }
}

/// One step row with the next seq of its execution, on a pool or inside a transaction.
/// One statement that records `n` steps in order, each row numbered after the execution's
/// highest seq plus its place in the batch (SQLite evaluates an `INSERT … SELECT` that reads its
/// own table completely before it inserts, so the batch is numbered gaplessly). `guard` is
/// appended to each row's condition, with its own values bound after the row's. `None` for none.
pub(crate) fn records_sql(n: usize, guard: &str) -> Option<String> {
    if n == 0 {
        return None;
    }
    let mut sql = String::from(
        "INSERT INTO steps (id, execution_id, seq, kind, content, tokens, created_at) ",
    );
    for i in 0..n {
        if i > 0 {
            sql.push_str(" UNION ALL ");
        }
        sql.push_str(&format!(
            "SELECT ?, e.id, COALESCE((SELECT MAX(s.seq) FROM steps s \
             WHERE s.execution_id = e.id), 0) + {}, ?, ?, ?, ? FROM executions e WHERE e.id = ?{guard}",
            i + 1
        ));
    }
    sql.push_str(" RETURNING seq");
    Some(sql)
}

/// Binds one row of [`records_sql`] (not its guard).
pub(crate) fn bind_record<'q>(
    query: sqlx::query::QueryScalar<'q, sqlx::Sqlite, i64, sqlx::sqlite::SqliteArguments>,
    id: &str,
    kind: StepKind,
    content: &str,
    tokens: u32,
    created_at: Timestamp,
    execution: ExecutionId,
) -> sqlx::query::QueryScalar<'q, sqlx::Sqlite, i64, sqlx::sqlite::SqliteArguments> {
    query
        .bind(id.to_owned())
        .bind(kind.as_str())
        .bind(content.to_owned())
        .bind(i64::from(tokens))
        .bind(created_at.0)
        .bind(execution.to_string())
}

pub(crate) async fn insert_step<'e, E, DB>(
    store: &Store,
    executor: E,
    execution: ExecutionId,
    kind: StepKind,
    content: &str,
) -> Result<Step>
where
    DB: sqlx::Database,
    E: sqlx::Executor<'e, Database = DB>,
    DB::Arguments: sqlx::IntoArguments<DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Type<DB> + sqlx::Decode<'q, DB>,
    for<'r> (i64,): sqlx::FromRow<'r, DB::Row>,
{
    let id = uuid::Uuid::now_v7().to_string();
    let tokens = store.counter().count_text(content);
    let created_at = Timestamp::now();
    // `fetch_all`: `fetch_optional` cancels the row stream after the first row, which costs a
    // round trip (see docs/PERFORMANCE.md, the store).
    let seqs: Vec<i64> = sqlx::query_scalar(
        "INSERT INTO steps (id, execution_id, seq, kind, content, tokens, created_at) \
         SELECT $1, e.id, COALESCE((SELECT MAX(s.seq) FROM steps s WHERE s.execution_id = e.id), 0) + 1, \
         $2, $3, $4, $5 FROM executions e WHERE e.id = $6 RETURNING seq",
    )
    .bind(id.clone())
    .bind(kind.as_str())
    .bind(content)
    .bind(i64::from(tokens))
    .bind(created_at.0)
    .bind(execution.to_string())
    .fetch_all(executor)
    .await?;
    let seq = *seqs
        .first()
        .ok_or_else(|| StoreError::not_found("execution", execution))?;
    Ok(Step {
        id,
        execution_id: execution,
        seq,
        kind: kind.as_str().to_owned(),
        content: content.to_owned(),
        tokens,
        created_at,
    })
}
