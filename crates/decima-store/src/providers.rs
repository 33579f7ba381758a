//! The providers repository: where each configured LLM endpoint lives. Rows hold no secrets by
//! design; API keys live in the OS keyring (see `decima_llm::secrets`), filed under the name.

use decima_core::Timestamp;
use sqlx::FromRow;

use crate::{Result, Store, StoreError, on_pool};

/// Longest model id; real ones are well under 100 characters.
const MAX_MODEL_CHARS: usize = 256;
/// Longest base URL accepted.
const MAX_URL_CHARS: usize = 2048;
/// The wire protocols a row may name, as the schema's CHECK allows.
const KINDS: [&str; 3] = ["openai", "anthropic", "ollama"];
/// Settings keys that can only mean a secret (compared lowercased, without `-` and `_`).
const SECRET_KEYS: [&str; 7] = [
    "apikey",
    "authorization",
    "proxyauthorization",
    "accesstoken",
    "bearer",
    "cookie",
    "xapikey",
];

/// A configured provider as settings and the runtime read it. It has no key field: keys never
/// reach the database.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderRecord {
    /// UUIDv7 text.
    pub id: String,
    /// Unique among live providers; also the keyring account of its key.
    pub name: String,
    /// The wire protocol: `openai` or `anthropic`.
    pub kind: String,
    /// The preset it was made from, if any.
    pub preset: Option<String>,
    /// Where requests go, without a trailing slash.
    pub base_url: String,
    /// The model requests ask for.
    pub model: String,
    /// The model's context window in tokens, which the context meter divides by.
    pub context_window: u32,
    /// A JSON object: thresholds, output reserve, tokenizer path, headers without secrets.
    pub settings: serde_json::Value,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// What a new provider needs; the store adds the id and times.
#[derive(Debug, Clone, PartialEq)]
pub struct NewProvider {
    /// 1 to 64 characters of `[A-Za-z0-9._-]`.
    pub name: String,
    /// `openai` or `anthropic`.
    pub kind: String,
    /// The preset it comes from, if any.
    pub preset: Option<String>,
    /// An `http://` or `https://` URL, without credentials, query or fragment.
    pub base_url: String,
    /// The model id.
    pub model: String,
    /// Tokens, more than zero.
    pub context_window: u32,
    /// A JSON object (`null` means `{}`) that holds no secrets.
    pub settings: serde_json::Value,
}

/// The columns of `providers`, in the order of [`ProviderRow`].
macro_rules! provider_columns {
    () => {
        "id, name, kind, preset, base_url, model, context_window, settings, created_at, updated_at"
    };
}

#[derive(FromRow)]
struct ProviderRow {
    id: String,
    name: String,
    kind: String,
    preset: Option<String>,
    base_url: String,
    model: String,
    context_window: i64,
    settings: String,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<ProviderRow> for ProviderRecord {
    type Error = StoreError;

    fn try_from(row: ProviderRow) -> Result<Self> {
        Ok(ProviderRecord {
            id: row.id,
            name: row.name,
            kind: row.kind,
            preset: row.preset,
            base_url: row.base_url,
            model: row.model,
            context_window: u32::try_from(row.context_window).map_err(|e| StoreError::Corrupt {
                what: "provider context window",
                detail: e.to_string(),
            })?,
            settings: serde_json::from_str(&row.settings).map_err(|e| StoreError::Corrupt {
                what: "provider settings",
                detail: e.to_string(),
            })?,
            created_at: Timestamp(row.created_at),
            updated_at: Timestamp(row.updated_at),
        })
    }
}

/// Provider operations, borrowed from a [`Store`].
pub struct Providers<'s> {
    store: &'s Store,
}

impl<'s> Providers<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Adds a provider. Names are unique among live providers; a removed one's name is free.
    pub async fn create(&self, new: NewProvider) -> Result<ProviderRecord> {
        check_name(&new.name)?;
        if let Some(preset) = &new.preset {
            check_name(preset).map_err(|_| {
                StoreError::InvalidInput(format!(
                    "invalid preset name {:?}",
                    decima_core::names::echo_untrusted(preset)
                ))
            })?;
        }
        let kind = check_kind(&new.kind)?;
        let base_url = checked_base_url(&new.base_url)?;
        let model = checked_model(&new.model)?;
        if new.context_window == 0 {
            return Err(StoreError::InvalidInput(
                "a provider's context window must be more than 0 tokens".into(),
            ));
        }
        let settings = checked_settings(new.settings)?;
        let settings_json = settings_text(&settings)?;
        let id = uuid::Uuid::now_v7().to_string();
        let now = Timestamp::now();
        on_pool!(self.store, |pool, d| sqlx::query(
            "INSERT INTO providers (id, name, kind, preset, base_url, model, context_window, \
             settings, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(&id)
        .bind(&new.name)
        .bind(kind)
        .bind(new.preset.as_deref())
        .bind(&base_url)
        .bind(&model)
        .bind(i64::from(new.context_window))
        .bind(&settings_json)
        .bind(now.0)
        .bind(now.0)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))
        .map_err(|e| match &e {
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                StoreError::InvalidInput(format!("a provider named {} already exists", new.name))
            }
            _ => StoreError::from(e),
        })?;
        Ok(ProviderRecord {
            id,
            name: new.name,
            kind: kind.to_string(),
            preset: new.preset,
            base_url,
            model,
            context_window: new.context_window,
            settings,
            created_at: now,
            updated_at: now,
        })
    }

    /// Live providers, by name.
    pub async fn list(&self) -> Result<Vec<ProviderRecord>> {
        let sql = concat!(
            "SELECT ",
            provider_columns!(),
            " FROM providers WHERE deleted_at IS NULL ORDER BY name"
        );
        let rows: Vec<ProviderRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .fetch_all(pool)
            .await)?;
        rows.into_iter().map(ProviderRecord::try_from).collect()
    }

    /// One live provider; a removed one counts as not found.
    pub async fn get_by_name(&self, name: &str) -> Result<ProviderRecord> {
        check_name(name)?;
        let sql = concat!(
            "SELECT ",
            provider_columns!(),
            " FROM providers WHERE name = $1 AND deleted_at IS NULL"
        );
        let row: Option<ProviderRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(name)
            .fetch_optional(pool)
            .await)?;
        match row {
            Some(row) => row.try_into(),
            None => Err(StoreError::not_found("provider", name)),
        }
    }

    /// Removes a provider (soft delete: executions that used it still point at its row). Its
    /// key is the caller's to delete from the keyring.
    pub async fn remove(&self, name: &str) -> Result<()> {
        check_name(name)?;
        let now = Timestamp::now().0;
        let done = on_pool!(self.store, |pool, d| {
            sqlx::query(
            "UPDATE providers SET deleted_at = $1, updated_at = $2 WHERE name = $3 AND deleted_at IS NULL",
        )
        .bind(now)
        .bind(now)
        .bind(name)
        .execute(pool)
        .await.map(|r| r.rows_affected())
        })?;
        if done == 0 {
            return Err(StoreError::not_found("provider", name));
        }
        Ok(())
    }

    /// Changes a live provider's address, model and window (what the analyst edits in the
    /// window's settings) and returns the updated provider.
    pub async fn update_endpoint(
        &self,
        name: &str,
        base_url: &str,
        model: &str,
        context_window: u32,
    ) -> Result<ProviderRecord> {
        check_name(name)?;
        let base_url = checked_base_url(base_url)?;
        let model = checked_model(model)?;
        if context_window == 0 {
            return Err(StoreError::InvalidInput(
                "a provider's context window must be above zero".into(),
            ));
        }
        let sql = concat!(
            "UPDATE providers SET base_url = $1, model = $2, context_window = $3, updated_at = $4 \
             WHERE name = $5 AND deleted_at IS NULL RETURNING ",
            provider_columns!()
        );
        let rows: Vec<ProviderRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(&base_url)
            .bind(&model)
            .bind(i64::from(context_window))
            .bind(Timestamp::now().0)
            .bind(name)
            .fetch_all(pool)
            .await)?;
        updated(rows, name)
    }

    /// Sets a live provider's window together with the settings that say where it came from
    /// (the server, the preset, the analyst), in one statement, and returns the updated provider.
    pub async fn update_window(
        &self,
        name: &str,
        context_window: u32,
        settings: serde_json::Value,
    ) -> Result<ProviderRecord> {
        check_name(name)?;
        if context_window == 0 {
            return Err(StoreError::InvalidInput(
                "a provider's context window must be above zero".into(),
            ));
        }
        let settings_json = settings_text(&checked_settings(settings)?)?;
        let sql = concat!(
            "UPDATE providers SET context_window = $1, settings = $2, updated_at = $3 \
             WHERE name = $4 AND deleted_at IS NULL RETURNING ",
            provider_columns!()
        );
        let rows: Vec<ProviderRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(i64::from(context_window))
            .bind(&settings_json)
            .bind(Timestamp::now().0)
            .bind(name)
            .fetch_all(pool)
            .await)?;
        updated(rows, name)
    }

    /// Replaces a live provider's settings object and returns the updated provider.
    pub async fn update_settings(
        &self,
        name: &str,
        settings: serde_json::Value,
    ) -> Result<ProviderRecord> {
        check_name(name)?;
        let settings_json = settings_text(&checked_settings(settings)?)?;
        let sql = concat!(
            "UPDATE providers SET settings = $1, updated_at = $2 WHERE name = $3 AND deleted_at IS NULL RETURNING ",
            provider_columns!()
        );
        // fetch_all steps the statement to completion in one exchange (see messages::append).
        let rows: Vec<ProviderRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(&settings_json)
            .bind(Timestamp::now().0)
            .bind(name)
            .fetch_all(pool)
            .await)?;
        updated(rows, name)
    }
}

/// 1 to 64 characters of `[A-Za-z0-9._-]`, not only dots: safe as a keyring account, a JSON key
/// and a CLI argument. Mirrors `decima_llm::secrets::validate_provider_name`.
fn check_name(name: &str) -> Result<()> {
    decima_core::names::check_provider_name(name).map_err(|reason| {
        StoreError::InvalidInput(format!(
            "invalid provider name {:?}: {reason}",
            decima_core::names::echo_untrusted(name)
        ))
    })
}

fn check_kind(kind: &str) -> Result<&'static str> {
    KINDS.into_iter().find(|k| *k == kind).ok_or_else(|| {
        StoreError::InvalidInput(format!(
            "a provider's kind must be \"openai\", \"anthropic\" or \"ollama\", not {:?}",
            decima_core::names::echo_untrusted(kind)
        ))
    })
}

/// Trims the URL and its trailing slashes (the client appends paths), and refuses anything that
/// is not a plain http(s) URL or that would carry credentials.
fn checked_base_url(url: &str) -> Result<String> {
    let invalid = |reason: &str| {
        Err(StoreError::InvalidInput(format!(
            "invalid base URL: {reason}"
        )))
    };
    let url = url.trim().trim_end_matches('/');
    if url.is_empty() {
        return invalid("it is empty");
    }
    if url.chars().count() > MAX_URL_CHARS {
        return invalid("it is longer than 2048 characters");
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return invalid("it contains spaces or control characters");
    }
    let lower = url.to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
    else {
        return invalid("it must start with http:// or https://");
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        return invalid("it has no host");
    }
    if authority.contains('@') {
        return invalid("it cannot carry a user name or password; keys belong in the keyring");
    }
    if rest.contains('?') || rest.contains('#') {
        return invalid("it cannot have a query or fragment");
    }
    Ok(url.to_string())
}

fn checked_model(model: &str) -> Result<String> {
    let model = model.trim();
    if model.is_empty() {
        return Err(StoreError::InvalidInput(
            "a provider's model cannot be empty".into(),
        ));
    }
    if model.chars().count() > MAX_MODEL_CHARS {
        return Err(StoreError::InvalidInput(format!(
            "a model id can have at most {MAX_MODEL_CHARS} characters"
        )));
    }
    if model.chars().any(|c| c.is_control()) {
        return Err(StoreError::InvalidInput(
            "a model id cannot contain control characters or line breaks".into(),
        ));
    }
    Ok(model.to_string())
}

/// Settings must be an object, and no key in it may name a secret: a header such as
/// `Authorization` would put a key in the database.
fn checked_settings(settings: serde_json::Value) -> Result<serde_json::Value> {
    let settings = match settings {
        serde_json::Value::Null => serde_json::Value::Object(serde_json::Map::new()),
        serde_json::Value::Object(_) => settings,
        _ => {
            return Err(StoreError::InvalidInput(
                "provider settings must be a JSON object".into(),
            ));
        }
    };
    if let Some(key) = secret_key(&settings) {
        return Err(StoreError::InvalidInput(format!(
            "provider settings cannot hold secrets (found {:?}); API keys belong in the keyring",
            decima_core::names::echo_untrusted(&key)
        )));
    }
    Ok(settings)
}

/// The first object key, at any depth, that names a secret.
pub(crate) fn secret_key(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::Object(map) => map.iter().find_map(|(key, inner)| {
            let norm: String = key
                .chars()
                .filter(|c| !matches!(c, '-' | '_'))
                .flat_map(char::to_lowercase)
                .collect();
            let named_secret = SECRET_KEYS.contains(&norm.as_str())
                || norm.ends_with("apikey")
                || norm.contains("secret")
                || norm.contains("password");
            if named_secret {
                Some(key.clone())
            } else {
                secret_key(inner)
            }
        }),
        serde_json::Value::Array(items) => items.iter().find_map(secret_key),
        _ => None,
    }
}

fn settings_text(settings: &serde_json::Value) -> Result<String> {
    serde_json::to_string(settings).map_err(|e| StoreError::InvalidInput(e.to_string()))
}

/// The provider an `UPDATE … RETURNING` changed: none means no live provider has that name.
fn updated(rows: Vec<ProviderRow>, name: &str) -> Result<ProviderRecord> {
    match rows.into_iter().next() {
        Some(row) => row.try_into(),
        None => Err(StoreError::not_found("provider", name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_normalised_or_refused() {
        assert_eq!(
            checked_base_url(" https://api.deepseek.com/v1/ ").unwrap(),
            "https://api.deepseek.com/v1"
        );
        assert_eq!(
            checked_base_url("http://localhost:11434/v1").unwrap(),
            "http://localhost:11434/v1"
        );
        for bad in [
            "",
            "   ",
            "ftp://x",
            "api.openai.com/v1",
            "https://",
            "https:///v1",
            "https://user:sk-123@host/v1",
            "https://host/v1?key=sk-123",
            "https://host/v1#frag",
            "https://ho st/v1",
            "javascript:alert(1)",
        ] {
            assert!(checked_base_url(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn settings_that_name_a_secret_are_refused() {
        use serde_json::json;
        for bad in [
            json!({"api_key": "x"}),
            json!({"headers": {"Authorization": "Bearer x"}}),
            json!({"headers": [{"X-Api-Key": "x"}]}),
            json!({"client_secret": "x"}),
            json!({"proxy": {"password": "x"}}),
            json!([1, 2]),
            json!("text"),
        ] {
            assert!(checked_settings(bad.clone()).is_err(), "{bad}");
        }
        for good in [
            json!(null),
            json!({}),
            json!({"max_tokens": 4096, "tokenizer_path": "/x", "output_reserve_tokens": 1}),
            json!({"headers": {"HTTP-Referer": "https://decima.app"}}),
        ] {
            assert!(checked_settings(good.clone()).is_ok(), "{good}");
        }
    }
}
