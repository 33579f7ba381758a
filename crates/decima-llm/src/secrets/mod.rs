//! API keys: kept in the OS keyring, or in a 0600 file in the data directory where none runs.
//!
//! Keys never reach the database, logs or error messages: they travel as [`SecretString`], whose
//! `Debug` and `Display` print `***`. Where the keyring is missing (headless Linux has no Secret
//! Service), [`SecretStore`] falls back to `secrets.json` and hands the caller a one-line warning
//! to print once.

mod file_vault;
mod keyring_vault;
/// Owner-only files and folders, as each platform makes them: modes on unix, ACLs on Windows.
#[cfg_attr(unix, path = "private/unix.rs")]
#[cfg_attr(windows, path = "private/windows.rs")]
mod private;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::LlmError;
use file_vault::FileVault;
use keyring_vault::{OsKeyring, Vault, keyring_unavailable};

/// The keyring service every Decima key is filed under; the account is the provider name.
pub const KEYRING_SERVICE: &str = "decima";
/// The fallback file's name inside the data directory.
pub const SECRETS_FILE: &str = "secrets.json";
/// Environment variable that picks the backend: `auto` (the default), `keyring` or `file`.
pub const BACKEND_ENV: &str = "DECIMA_SECRET_BACKEND";

/// Real keys are well under 1 KiB; anything this long is a paste accident.
const MAX_KEY_BYTES: usize = 16 * 1024;
/// Keeps keyring diagnostics on one short line.
const MAX_DETAIL_CHARS: usize = 200;

/// A secret string that cannot leak through `{:?}` or `{}`: both print `***`. Read the value
/// with [`SecretString::expose`], which makes every use greppable.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretString(String);

/// An API key: the secret a provider needs.
pub type ApiKey = SecretString;

impl SecretString {
    /// Wraps a secret as early as possible, so nothing downstream can print it.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the one place that must send it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for SecretString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl From<String> for SecretString {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for SecretString {
    fn from(value: &str) -> Self {
        Self(value.to_string())
    }
}

/// Where keys currently go, so settings can tell the user how their keys are protected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretBackend {
    /// The OS keyring (Secret Service, Keychain, Credential Manager).
    Keyring,
    /// The 0600 fallback file at this path.
    File(PathBuf),
}

/// Which backend to use, as `DECIMA_SECRET_BACKEND` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// The keyring when it answers, the file otherwise (with a warning).
    #[default]
    Auto,
    /// The keyring only: fail rather than write keys to a file.
    Keyring,
    /// The file only: for tests and headless machines that have no keyring by design.
    File,
}

impl BackendChoice {
    /// Reads `DECIMA_SECRET_BACKEND`; unset or empty means [`BackendChoice::Auto`].
    pub fn from_env() -> Result<Self, LlmError> {
        let value = std::env::var_os(BACKEND_ENV);
        Self::parse(value.as_ref().map(|v| v.to_string_lossy()).as_deref())
    }

    /// Parses the variable's value, so a typo fails loudly instead of silently meaning `auto`.
    pub fn parse(value: Option<&str>) -> Result<Self, LlmError> {
        match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("auto") => Ok(Self::Auto),
            Some("keyring") => Ok(Self::Keyring),
            Some("file") => Ok(Self::File),
            Some(_) => Err(LlmError::InvalidSecretBackend {
                value: decima_core::names::echo_untrusted(value.unwrap_or_default()),
            }),
        }
    }
}

/// Result alias for secret operations.
pub type Result<T, E = LlmError> = std::result::Result<T, E>;

/// Checks a provider name before it becomes a keyring account or a JSON key: 1 to 64 characters
/// of `[A-Za-z0-9._-]`, not only dots. The store applies the same rule to provider rows.
pub fn validate_provider_name(name: &str) -> Result<()> {
    decima_core::names::check_provider_name(name).map_err(|reason| LlmError::InvalidProviderName {
        name: decima_core::names::echo_untrusted(name),
        reason,
    })
}

/// What can change after opening: a keyring that fails mid-session is abandoned for the file.
struct State {
    use_keyring: bool,
    warned: bool,
    pending_warning: Option<String>,
}

/// API keys by provider name.
///
/// The plain methods block: the keyring talks D-Bus (which can wait on an unlock prompt) and the
/// file takes a lock and syncs to disk. Async code calls the `*_async` methods instead, which run
/// the same operations on tokio's blocking pool, so a slow keyring never stalls an async worker.
/// Clones are cheap and share one state: the switch to the file and its one warning.
#[derive(Clone)]
pub struct SecretStore {
    inner: Arc<Inner>,
}

/// What every clone of a [`SecretStore`] shares.
struct Inner {
    file: FileVault,
    keyring: Option<Box<dyn Vault>>,
    allow_fallback: bool,
    state: Mutex<State>,
}

impl fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretStore")
            .field("backend", &self.backend())
            .finish()
    }
}

impl SecretStore {
    /// Opens the store for `data_dir` with the backend `DECIMA_SECRET_BACKEND` asks for. The
    /// warning, when present, is one line that the caller should print once: keys go to a file.
    pub fn open(data_dir: &Path) -> Result<(Self, Option<String>)> {
        Self::open_with(data_dir, BackendChoice::from_env()?)
    }

    /// [`SecretStore::open`] for async code: asking whether the keyring answers can block.
    pub async fn open_async(data_dir: &Path) -> Result<(Self, Option<String>)> {
        let choice = BackendChoice::from_env()?;
        Self::open_with_async(data_dir, choice).await
    }

    /// [`SecretStore::open_with`] for async code.
    pub async fn open_with_async(
        data_dir: &Path,
        choice: BackendChoice,
    ) -> Result<(Self, Option<String>)> {
        let data_dir = data_dir.to_path_buf();
        blocking(move || Self::open_with(&data_dir, choice)).await
    }

    /// Like [`SecretStore::open`] with an explicit choice, for callers with their own settings.
    pub fn open_with(data_dir: &Path, choice: BackendChoice) -> Result<(Self, Option<String>)> {
        let file = FileVault::new(data_dir);
        match choice {
            BackendChoice::File => Ok((Self::file_only(file), None)),
            BackendChoice::Keyring => match OsKeyring::status() {
                Ok(()) => Ok((Self::keyring_first(file, Box::new(OsKeyring), false), None)),
                Err(detail) => Err(LlmError::KeyringUnavailable { detail }),
            },
            BackendChoice::Auto => match OsKeyring::status() {
                Ok(()) => Ok((Self::keyring_first(file, Box::new(OsKeyring), true), None)),
                Err(detail) => {
                    tracing::debug!(%detail, "no OS keyring: API keys go to the 0600 file");
                    let warning = fallback_warning(&file.path, &detail);
                    let store = Self::file_only(file);
                    store.inner.lock_state().warned = true;
                    Ok((store, Some(warning)))
                }
            },
        }
    }

    fn file_only(file: FileVault) -> Self {
        Self::from_inner(Inner {
            file,
            keyring: None,
            allow_fallback: false,
            state: Mutex::new(State {
                use_keyring: false,
                warned: false,
                pending_warning: None,
            }),
        })
    }

    fn keyring_first(file: FileVault, keyring: Box<dyn Vault>, allow_fallback: bool) -> Self {
        Self::from_inner(Inner {
            file,
            keyring: Some(keyring),
            allow_fallback,
            state: Mutex::new(State {
                use_keyring: true,
                warned: false,
                pending_warning: None,
            }),
        })
    }

    fn from_inner(inner: Inner) -> Self {
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Where keys go now. This changes from keyring to file if the keyring fails mid-session.
    pub fn backend(&self) -> SecretBackend {
        if self.inner.active_keyring().is_some() {
            SecretBackend::Keyring
        } else {
            SecretBackend::File(self.inner.file.path.clone())
        }
    }

    /// The one-line warning produced when the keyring failed after opening, if it has not been
    /// taken yet. Callers that print [`SecretStore::open`]'s warning should also poll this.
    pub fn take_warning(&self) -> Option<String> {
        self.inner.lock_state().pending_warning.take()
    }

    /// The provider's key, if one is stored. With the keyring in use, a key left in the file
    /// (written while the keyring was away) is still found. Blocks: see [`SecretStore::get_async`].
    pub fn get(&self, provider: &str) -> Result<Option<SecretString>> {
        Ok(self.inner.get_located(provider)?.map(|(key, _)| key))
    }

    /// Where the provider's key is stored, if anywhere: settings say so truthfully (a machine
    /// without a keyring service keeps keys in the 0600 file). Blocks: see
    /// [`SecretStore::locate_async`].
    pub fn locate(&self, provider: &str) -> Result<Option<SecretBackend>> {
        Ok(self.inner.get_located(provider)?.map(|(_, place)| place))
    }

    /// [`SecretStore::locate`] on the blocking pool, for async code.
    pub async fn locate_async(&self, provider: &str) -> Result<Option<SecretBackend>> {
        let store = self.clone();
        let provider = provider.to_string();
        blocking(move || store.locate(&provider)).await
    }

    /// Stores or replaces the provider's key. Surrounding whitespace (a pasted newline) is
    /// trimmed. Blocks: see [`SecretStore::set_async`].
    pub fn set(&self, provider: &str, key: &SecretString) -> Result<()> {
        self.inner.set(provider, key)
    }

    /// Removes the provider's key wherever it is stored. Returns whether there was one. Blocks:
    /// see [`SecretStore::delete_async`].
    pub fn delete(&self, provider: &str) -> Result<bool> {
        self.inner.delete(provider)
    }

    /// [`SecretStore::get`] on the blocking pool, for async code.
    pub async fn get_async(&self, provider: &str) -> Result<Option<SecretString>> {
        let store = self.clone();
        let provider = provider.to_string();
        blocking(move || store.get(&provider)).await
    }

    /// [`SecretStore::set`] on the blocking pool, for async code.
    pub async fn set_async(&self, provider: &str, key: &SecretString) -> Result<()> {
        let store = self.clone();
        let provider = provider.to_string();
        let key = key.clone();
        blocking(move || store.set(&provider, &key)).await
    }

    /// [`SecretStore::delete`] on the blocking pool, for async code.
    pub async fn delete_async(&self, provider: &str) -> Result<bool> {
        let store = self.clone();
        let provider = provider.to_string();
        blocking(move || store.delete(&provider)).await
    }
}

/// Runs a blocking secret operation on tokio's blocking pool. A panic there is re-raised here, as
/// if the call had been made directly; a task cancelled by a shutting-down runtime is reported
/// as a cancelled request.
async fn blocking<T, F>(operation: F) -> Result<T>
where
    F: FnOnce() -> Result<T> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(operation).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(LlmError::Cancelled),
    }
}

impl Inner {
    fn get_located(&self, provider: &str) -> Result<Option<(SecretString, SecretBackend)>> {
        validate_provider_name(provider)?;
        if let Some(keyring) = self.active_keyring() {
            match keyring.get(provider) {
                Ok(Some(secret)) => {
                    return Ok(Some((SecretString(secret), SecretBackend::Keyring)));
                }
                Ok(None) => {
                    if !self.file.exists() {
                        return Ok(None);
                    }
                }
                Err(e) => self.keyring_failed(e, "read", provider)?,
            }
        }
        Ok(self
            .file
            .get(provider)?
            .map(|key| (key, SecretBackend::File(self.file.path.clone()))))
    }

    fn set(&self, provider: &str, key: &SecretString) -> Result<()> {
        validate_provider_name(provider)?;
        let key = checked_key(key)?;
        if let Some(keyring) = self.active_keyring() {
            match keyring.set(provider, key) {
                Ok(()) => {
                    // Best effort: a plaintext copy from a fallback session would otherwise linger.
                    // The keyring copy wins on reads, so a failure here changes nothing visible.
                    if self.file.exists() {
                        let _ = self.file.remove(provider);
                    }
                    return Ok(());
                }
                Err(e) => self.keyring_failed(e, "store", provider)?,
            }
        }
        self.file.set(provider, key)
    }

    fn delete(&self, provider: &str) -> Result<bool> {
        validate_provider_name(provider)?;
        let mut found = false;
        if let Some(keyring) = self.active_keyring() {
            match keyring.delete(provider) {
                Ok(removed) => found = removed,
                Err(e) => self.keyring_failed(e, "delete", provider)?,
            }
        }
        if self.file.exists() {
            found |= self.file.remove(provider)?;
        }
        Ok(found)
    }

    fn active_keyring(&self) -> Option<&dyn Vault> {
        let keyring = self.keyring.as_deref()?;
        self.lock_state().use_keyring.then_some(keyring)
    }

    /// Switches to the file when the keyring vanished and fallback is allowed; otherwise reports.
    fn keyring_failed(
        &self,
        e: keyring::Error,
        action: &'static str,
        provider: &str,
    ) -> Result<()> {
        let detail = one_line(&e.to_string());
        if !keyring_unavailable(&e) {
            return Err(LlmError::Keyring {
                action,
                provider: provider.to_string(),
                detail,
            });
        }
        if !self.allow_fallback {
            return Err(LlmError::KeyringUnavailable { detail });
        }
        tracing::warn!(
            action,
            provider,
            %detail,
            "the OS keyring went away: API keys go to the 0600 file from now on"
        );
        let mut state = self.lock_state();
        state.use_keyring = false;
        if !state.warned {
            state.warned = true;
            state.pending_warning = Some(fallback_warning(&self.file.path, &detail));
        }
        Ok(())
    }

    fn lock_state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn fallback_warning(path: &Path, detail: &str) -> String {
    format!(
        "warning: no OS keyring is available ({detail}); API keys are kept in {} (readable only by you, mode 0600)",
        path.display()
    )
}

/// Trims the key and refuses values that cannot be a key. Messages never quote the key.
fn checked_key(key: &SecretString) -> Result<&str> {
    let key = key.expose().trim();
    if key.is_empty() {
        return Err(LlmError::InvalidKey("it is empty"));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(LlmError::InvalidKey(
            "it is longer than 16 KiB; paste only the key",
        ));
    }
    if key.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(LlmError::InvalidKey(
            "it contains spaces, line breaks or control characters; paste only the key",
        ));
    }
    Ok(key)
}

/// Keyring messages can span lines; warnings and errors must not.
fn one_line(s: &str) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > MAX_DETAIL_CHARS {
        let mut cut: String = flat.chars().take(MAX_DETAIL_CHARS).collect();
        cut.push('…');
        cut
    } else {
        flat
    }
}

#[cfg(test)]
mod tests;
