//! Prompt presets: native ones and SillyTavern cards and presets imported into the same model.
//! The body is the preset model serialised as JSON by decima-core; the store keeps it opaque but
//! refuses anything that is not a JSON object.

use decima_core::Timestamp;
use sqlx::FromRow;

use crate::{Result, Store, StoreError, on_pool};

/// What a preset was made from.
pub const PRESET_KINDS: [&str; 3] = ["native", "st_card", "st_preset"];
/// Longest preset name.
const MAX_NAME_CHARS: usize = 200;

/// A stored preset.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetRecord {
    /// UUIDv7 text.
    pub id: String,
    /// What the user sees.
    pub name: String,
    /// `native`, `st_card` or `st_preset`.
    pub kind: String,
    /// The file it was imported from, if any.
    pub source: Option<String>,
    /// The preset model as JSON.
    pub body: serde_json::Value,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

#[derive(FromRow)]
struct PresetRow {
    id: String,
    name: String,
    kind: String,
    source: Option<String>,
    body: String,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<PresetRow> for PresetRecord {
    type Error = StoreError;

    fn try_from(row: PresetRow) -> Result<Self> {
        Ok(PresetRecord {
            body: serde_json::from_str(&row.body).map_err(|e| StoreError::Corrupt {
                what: "preset body",
                detail: e.to_string(),
            })?,
            id: row.id,
            name: row.name,
            kind: row.kind,
            source: row.source,
            created_at: Timestamp(row.created_at),
            updated_at: Timestamp(row.updated_at),
        })
    }
}

/// Preset operations, borrowed from a [`Store`].
pub struct Presets<'s> {
    store: &'s Store,
}

impl<'s> Presets<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Stores a preset; one statement.
    pub async fn create(
        &self,
        name: &str,
        kind: &str,
        source: Option<&str>,
        body: &serde_json::Value,
    ) -> Result<PresetRecord> {
        let name = name.trim();
        if name.is_empty()
            || name.chars().count() > MAX_NAME_CHARS
            || name.chars().any(char::is_control)
        {
            return Err(StoreError::InvalidInput(format!(
                "a preset name needs 1 to {MAX_NAME_CHARS} characters and no line breaks"
            )));
        }
        if !PRESET_KINDS.contains(&kind) {
            return Err(StoreError::InvalidInput(format!(
                "a preset's kind must be native, st_card or st_preset, not {:?}",
                decima_core::names::echo_untrusted(kind)
            )));
        }
        if !body.is_object() {
            return Err(StoreError::InvalidInput(
                "a preset body must be a JSON object".into(),
            ));
        }
        let id = uuid::Uuid::now_v7().to_string();
        let now = Timestamp::now().0;
        on_pool!(self.store, |pool, d| sqlx::query(
            "INSERT INTO presets (id, name, kind, source, body, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&id)
        .bind(name)
        .bind(kind)
        .bind(source)
        .bind(body.to_string())
        .bind(now)
        .bind(now)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        self.get(&id).await
    }

    /// Live presets, newest first.
    pub async fn list(&self) -> Result<Vec<PresetRecord>> {
        let rows: Vec<PresetRow> = on_pool!(self.store, |pool, d| sqlx::query_as(
            "SELECT id, name, kind, source, body, created_at, updated_at FROM presets \
             WHERE deleted_at IS NULL ORDER BY created_at DESC, id DESC",
        )
        .fetch_all(pool)
        .await)?;
        rows.into_iter().map(PresetRecord::try_from).collect()
    }

    /// One live preset.
    pub async fn get(&self, id: &str) -> Result<PresetRecord> {
        let row: Option<PresetRow> = on_pool!(self.store, |pool, d| sqlx::query_as(
            "SELECT id, name, kind, source, body, created_at, updated_at FROM presets \
             WHERE id = $1 AND deleted_at IS NULL",
        )
        .bind(id)
        .fetch_optional(pool)
        .await)?;
        match row {
            Some(row) => row.try_into(),
            None => Err(StoreError::not_found(
                "preset",
                decima_core::names::echo_untrusted(id),
            )),
        }
    }
}
