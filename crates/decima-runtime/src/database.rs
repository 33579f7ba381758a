//! Which store a data directory's window and CLI open: this computer's SQLite file, or a
//! team's shared PostgreSQL database chosen in Settings.
//!
//! The choice is saved beside the data it concerns (`DATA_DIR/database.json`, the URL without
//! its password); the password goes to the secret store (the system keyring, or its 0600
//! fallback file), never to that file, a log or the window. `DECIMA_DATABASE_URL` (and the
//! CLI's `--database-url`) win over the saved choice, as `DOCKER_HOST` wins over the saved
//! engine.

use std::path::Path;
use std::sync::Arc;

use decima_core::TokenCounter;
use decima_llm::secrets::{SecretBackend, SecretStore, SecretString};
use decima_store::{SchemaState, Store, StoreError, StoreLocation};
use serde::{Deserialize, Serialize};

use crate::error::{Result, RuntimeError};

/// The saved choice, in the data directory.
const CHOICE_FILE: &str = "database.json";
/// The secret store's account for the database's password.
const ACCOUNT: &str = "decima.database";

/// What Settings saved: a shared database's URL, without its password.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatabaseChoice {
    /// `postgres://user@host:port/db?sslmode=…`; `None`: this computer's file.
    pub url: Option<String>,
}

/// Where the open store's address came from, for the window to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `--database-url` or `DECIMA_DATABASE_URL`.
    Environment,
    /// The choice saved in Settings.
    Settings,
    /// Nothing chose: the data directory's own SQLite file.
    Local,
}

/// The choice saved in Settings, or none (also when the file cannot be read: the local file
/// is opened, and Settings shows no shared database).
pub fn saved(data_dir: &Path) -> DatabaseChoice {
    std::fs::read(data_dir.join(CHOICE_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// `DECIMA_DATABASE_URL` when it is set and not empty.
pub fn from_environment() -> Option<String> {
    std::env::var("DECIMA_DATABASE_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
}

/// The store to open: `explicit` (the CLI's flag or the environment) when given, else the
/// database Settings saved (with its password from the secret store), else the data
/// directory's own file.
pub async fn location(data_dir: &Path, explicit: Option<&str>) -> Result<(StoreLocation, Source)> {
    if let Some(url) = explicit.filter(|u| !u.trim().is_empty()) {
        return Ok((StoreLocation::parse(url)?, Source::Environment));
    }
    let Some(url) = saved(data_dir).url else {
        return Ok((StoreLocation::in_data_dir(data_dir), Source::Local));
    };
    let (secrets, _warning) = SecretStore::open_async(data_dir).await?;
    let url = match secrets.get_async(ACCOUNT).await? {
        Some(password) => with_password(&url, password.expose())?,
        None => url,
    };
    Ok((StoreLocation::parse(&url)?, Source::Settings))
}

/// Checks and saves a shared database: `url` (a password in it is moved out) and `password`
/// (which wins over one in the URL; none keeps the password saved before, as Settings' blank
/// field promises). The database must answer and hold this build's schema; nothing is saved
/// otherwise. Returns its schema's state and where the password is kept.
pub async fn save(
    data_dir: &Path,
    url: &str,
    password: Option<&str>,
    counter: Arc<dyn TokenCounter>,
) -> Result<(SchemaState, Option<SecretBackend>)> {
    let (bare, typed) = split_password(url.trim())?;
    let password = password
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .or(typed);
    let (secrets, _warning) = SecretStore::open_async(data_dir).await?;
    let kept = match &password {
        Some(_) => None,
        None => secrets
            .get_async(ACCOUNT)
            .await?
            .map(|p| p.expose().to_owned()),
    };
    let full = match password.as_ref().or(kept.as_ref()) {
        Some(p) => with_password(&bare, p)?,
        None => bare.clone(),
    };
    let location = StoreLocation::parse(&full)?;
    if !location.is_postgres() {
        return Err(RuntimeError::Config(
            "a shared database is a postgres:// URL, such as \
             postgres://analyst@db.example.org:5432/decima?sslmode=verify-full"
                .into(),
        ));
    }
    let store = match Store::connect(&location, counter).await {
        Ok(store) => store,
        Err(StoreError::SchemaBehind { found, known }) => {
            return Err(RuntimeError::Config(format!(
                "the database answers, but its schema is at version {found} and this Decima \
                 needs {known}: run `decima --database-url {} db migrate` once, then save again",
                location.redacted()
            )));
        }
        Err(e) => return Err(e.into()),
    };
    let state = store.schema_state().await?;
    store.close().await;
    if let Some(p) = &password {
        secrets
            .set_async(ACCOUNT, &SecretString::new(p.clone()))
            .await?;
    }
    let placed = secrets.locate_async(ACCOUNT).await?;
    write_choice(data_dir, &DatabaseChoice { url: Some(bare) })?;
    Ok((state, placed))
}

/// Goes back to this computer's file: the saved URL and its password are forgotten.
pub async fn forget(data_dir: &Path) -> Result<()> {
    let (secrets, _warning) = SecretStore::open_async(data_dir).await?;
    secrets.delete_async(ACCOUNT).await?;
    match std::fs::remove_file(data_dir.join(CHOICE_FILE)) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(RuntimeError::Io {
            action: "remove",
            path: data_dir.join(CHOICE_FILE),
            source,
        }),
    }
}

/// Where the saved password is kept, if one is.
pub async fn password_place(data_dir: &Path) -> Result<Option<SecretBackend>> {
    let (secrets, _warning) = SecretStore::open_async(data_dir).await?;
    Ok(secrets.locate_async(ACCOUNT).await?)
}

fn write_choice(data_dir: &Path, choice: &DatabaseChoice) -> Result<()> {
    let path = data_dir.join(CHOICE_FILE);
    let io = |source| RuntimeError::Io {
        action: "save",
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(data_dir).map_err(io)?;
    let text = serde_json::to_vec_pretty(choice)
        .map_err(|e| RuntimeError::Config(format!("cannot write the database choice: {e}")))?;
    let temp = path.with_extension("json.tmp");
    std::fs::write(&temp, text).map_err(io)?;
    std::fs::rename(&temp, &path).map_err(io)
}

/// A URL parsed as one, with a message that says what a database URL looks like.
fn parsed(url: &str) -> Result<url::Url> {
    url::Url::parse(url).map_err(|e| {
        RuntimeError::Config(format!(
            "that is not a database URL ({e}): write postgres://user@host:5432/dbname"
        ))
    })
}

/// `url` without the password in it, and that password (decoded).
fn split_password(url: &str) -> Result<(String, Option<String>)> {
    let mut parsed = parsed(url)?;
    let password = parsed.password().map(|p| {
        percent_encoding::percent_decode_str(p)
            .decode_utf8_lossy()
            .into_owned()
    });
    if password.is_some() {
        parsed.set_password(None).map_err(|()| {
            RuntimeError::Config("that database URL cannot hold a password".into())
        })?;
    }
    Ok((parsed.to_string(), password))
}

/// `url` with `password` (encoded as a URL needs).
fn with_password(url: &str, password: &str) -> Result<String> {
    let mut parsed = parsed(url)?;
    if parsed.username().is_empty() {
        return Err(RuntimeError::Config(
            "a password needs a user: write postgres://user@host:5432/dbname".into(),
        ));
    }
    parsed
        .set_password(Some(password))
        .map_err(|()| RuntimeError::Config("that database URL cannot hold a password".into()))?;
    Ok(parsed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_moved_out_of_the_url_and_put_back_encoded() {
        let (bare, password) =
            split_password("postgres://ana:s%40cr%3At@db.lab:5432/decima?sslmode=verify-full")
                .unwrap();
        assert_eq!(
            bare,
            "postgres://ana@db.lab:5432/decima?sslmode=verify-full"
        );
        assert_eq!(password.as_deref(), Some("s@cr:t"));
        let back = with_password(&bare, "p@ss word/?#").unwrap();
        assert!(!back.contains("p@ss word"), "{back}");
        let (again, decoded) = split_password(&back).unwrap();
        assert_eq!(again, bare);
        assert_eq!(decoded.as_deref(), Some("p@ss word/?#"));
        assert!(
            with_password("postgres://db.lab/decima", "x")
                .unwrap_err()
                .to_string()
                .contains("needs a user")
        );
        assert!(split_password("not a url").is_err());
    }
}
