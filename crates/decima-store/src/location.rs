//! Where a store lives: the embedded SQLite file (the default), or a team's shared PostgreSQL
//! database, told apart by the URL the analyst gave.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::{Result, StoreError};

/// A store's address, parsed once so that every entry point (the CLI's `--database-url`,
/// `DECIMA_DATABASE_URL`, Settings) accepts the same forms and reports the same errors.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A SQLite file on this machine.
    Sqlite(PathBuf),
    /// A PostgreSQL database, as a `postgres://` URL (its password, if any, included: it never
    /// leaves memory; see [`StoreLocation::redacted`]).
    Postgres(String),
}

impl StoreLocation {
    /// Parses `postgres://…`, `postgresql://…`, `sqlite://PATH`, `sqlite:PATH` or a bare path.
    ///
    /// # Errors
    /// [`StoreError::InvalidInput`] for another scheme or an empty address.
    pub fn parse(url: &str) -> Result<Self> {
        let url = url.trim();
        if url.is_empty() {
            return Err(StoreError::InvalidInput(
                "the database URL is empty: give a postgres:// URL or the path of a SQLite file"
                    .to_owned(),
            ));
        }
        let lower = url.to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            return Ok(Self::Postgres(url.to_owned()));
        }
        if let Some(path) = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            let path = path.split('?').next().unwrap_or_default();
            if path.is_empty() {
                return Err(StoreError::InvalidInput(
                    "a sqlite: URL needs the path of the database file".to_owned(),
                ));
            }
            return Ok(Self::Sqlite(PathBuf::from(path)));
        }
        if let Some((scheme, _)) = url.split_once("://") {
            return Err(StoreError::InvalidInput(format!(
                "Decima stores conversations in SQLite or PostgreSQL; \"{scheme}://\" is neither \
                 (use postgres://user@host:5432/dbname or a file path)"
            )));
        }
        Ok(Self::Sqlite(PathBuf::from(url)))
    }

    /// The SQLite file of the data directory `data_dir`.
    #[must_use]
    pub fn in_data_dir(data_dir: &Path) -> Self {
        Self::Sqlite(data_dir.join(crate::DATABASE_FILE))
    }

    /// The address without its password, for messages and logs.
    #[must_use]
    pub fn redacted(&self) -> String {
        match self {
            Self::Sqlite(path) => path.display().to_string(),
            Self::Postgres(url) => redact_password(url),
        }
    }

    /// Whether this is a shared PostgreSQL database.
    #[must_use]
    pub fn is_postgres(&self) -> bool {
        matches!(self, Self::Postgres(_))
    }
}

impl fmt::Debug for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// `postgres://user:secret@host/db` becomes `postgres://user:***@host/db`; a `password=` query
/// parameter is hidden the same way.
fn redact_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => {
                        format!("{key}=***")
                    }
                    _ => pair.to_owned(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn urls_pick_the_backend() {
        assert_eq!(
            StoreLocation::parse("postgres://a@h/db").unwrap(),
            StoreLocation::Postgres("postgres://a@h/db".to_owned())
        );
        assert!(
            StoreLocation::parse("PostgreSQL://a@h/db")
                .unwrap()
                .is_postgres()
        );
        assert_eq!(
            StoreLocation::parse("sqlite:///tmp/x.db?mode=rwc").unwrap(),
            StoreLocation::Sqlite(PathBuf::from("/tmp/x.db"))
        );
        assert_eq!(
            StoreLocation::parse("sqlite:rel.db").unwrap(),
            StoreLocation::Sqlite(PathBuf::from("rel.db"))
        );
        assert_eq!(
            StoreLocation::parse(" /data/decima.db ").unwrap(),
            StoreLocation::Sqlite(PathBuf::from("/data/decima.db"))
        );
        let err = StoreLocation::parse("mysql://h/db")
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"mysql://\" is neither"), "{err}");
        assert!(StoreLocation::parse("  ").is_err());
        assert!(StoreLocation::parse("sqlite:").is_err());
    }

    #[test]
    fn passwords_never_show() {
        let loc =
            StoreLocation::parse("postgres://ana:s3cret@db.team:5432/decima?sslmode=verify-full")
                .unwrap();
        assert_eq!(
            loc.redacted(),
            "postgres://ana:***@db.team:5432/decima?sslmode=verify-full"
        );
        assert!(!format!("{loc:?} {loc}").contains("s3cret"));
        let query = StoreLocation::parse("postgres://h/db?user=a&password=s3cret&x=1").unwrap();
        assert_eq!(query.redacted(), "postgres://h/db?user=a&password=***&x=1");
        let at_in_password = StoreLocation::parse("postgres://a:p@ss@h/db").unwrap();
        assert_eq!(at_in_password.redacted(), "postgres://a:***@h/db");
    }
}
