//! Installation-wide settings: small JSON objects under fixed keys. The runtime gives them
//! types; the store only keeps them whole, refuses anything that looks like a secret, and
//! replaces a key in one statement so two windows saving at once cannot interleave.

use decima_core::Timestamp;

use crate::providers::secret_key;
use crate::{Result, Store, StoreError, on_pool};

/// Longest key accepted (the schema's CHECK says the same).
const MAX_KEY_CHARS: usize = 64;
/// Largest object accepted: settings are a few fields, not documents.
const MAX_VALUE_BYTES: usize = 64 * 1024;

/// Settings operations, borrowed from a [`Store`].
pub struct AppSettings<'s> {
    store: &'s Store,
}

impl<'s> AppSettings<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// The object under `key`, or `None` when it was never saved.
    pub async fn get(&self, key: &str) -> Result<Option<serde_json::Value>> {
        check_key(key)?;
        let row: Option<(String,)> = on_pool!(self.store, |pool, d| sqlx::query_as(
            "SELECT value FROM app_settings WHERE key = $1"
        )
        .bind(key)
        .fetch_optional(pool)
        .await)?;
        row.map(|(text,)| {
            serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                what: "app setting",
                detail: e.to_string(),
            })
        })
        .transpose()
    }

    /// Saves `value` under `key`, replacing what was there.
    pub async fn put(&self, key: &str, value: &serde_json::Value) -> Result<()> {
        check_key(key)?;
        if !value.is_object() {
            return Err(StoreError::InvalidInput(format!(
                "the setting {key} must be a JSON object"
            )));
        }
        if let Some(secret) = secret_key(value) {
            return Err(StoreError::InvalidInput(format!(
                "settings cannot hold secrets (found {:?}); API keys belong in the keyring",
                decima_core::names::echo_untrusted(&secret)
            )));
        }
        let text = serde_json::to_string(value).map_err(|e| {
            StoreError::InvalidInput(format!("the setting {key} cannot be written: {e}"))
        })?;
        if text.len() > MAX_VALUE_BYTES {
            return Err(StoreError::InvalidInput(format!(
                "the setting {key} is {} bytes; settings hold at most {MAX_VALUE_BYTES}",
                text.len()
            )));
        }
        on_pool!(self.store, |pool, d| {
            sqlx::query(
            "INSERT INTO app_settings (key, value, updated_at) VALUES ($1, $2, $3) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        )
        .bind(key)
        .bind(&text)
        .bind(Timestamp::now().0)
        .execute(pool)
        .await.map(|r| r.rows_affected())
        })?;
        Ok(())
    }
}

/// Keys are fixed names chosen by the code: lowercase letters, digits, `.` and `_`.
fn check_key(key: &str) -> Result<()> {
    let ok = !key.is_empty()
        && key.len() <= MAX_KEY_CHARS
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidInput(format!(
            "invalid setting key {:?}: use 1 to {MAX_KEY_CHARS} of a-z, 0-9, '.' and '_'",
            decima_core::names::echo_untrusted(key)
        )))
    }
}
