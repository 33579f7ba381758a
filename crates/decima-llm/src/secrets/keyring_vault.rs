//! The OS keyring behind the [`Vault`] trait, so that tests can stand in a failing one.

use super::{KEYRING_SERVICE, one_line};

/// The keyring operations Decima needs, behind a trait so tests can simulate a failing keyring.
pub(super) trait Vault: Send + Sync {
    /// The stored key, or `None` when there is none.
    fn get(&self, account: &str) -> keyring::Result<Option<String>>;
    /// Stores or replaces the key.
    fn set(&self, account: &str, secret: &str) -> keyring::Result<()>;
    /// Removes the key; `false` when there was none.
    fn delete(&self, account: &str) -> keyring::Result<bool>;
}
/// The platform keyring through the `keyring` crate.
pub(super) struct OsKeyring;
impl OsKeyring {
    /// Whether the platform store could be reached; the crate connects once, on first use.
    pub(super) fn status() -> std::result::Result<(), String> {
        keyring::Entry::store_status()
            .as_ref()
            .map(|_| ())
            .map_err(|e| one_line(&e.to_string()))
    }
}
impl Vault for OsKeyring {
    fn get(&self, account: &str) -> keyring::Result<Option<String>> {
        match keyring::Entry::new(KEYRING_SERVICE, account)?.get_password() {
            Ok(secret) => Ok(Some(secret)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn set(&self, account: &str, secret: &str) -> keyring::Result<()> {
        keyring::Entry::new(KEYRING_SERVICE, account)?.set_password(secret)
    }

    fn delete(&self, account: &str) -> keyring::Result<bool> {
        match keyring::Entry::new(KEYRING_SERVICE, account)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(e),
        }
    }
}
/// Errors that mean "there is no usable keyring here", as opposed to "the keyring said no".
pub(super) fn keyring_unavailable(e: &keyring::Error) -> bool {
    matches!(
        e,
        keyring::Error::NoDefaultStore
            | keyring::Error::PlatformFailure(_)
            | keyring::Error::NotSupportedByStore(_)
    )
}
