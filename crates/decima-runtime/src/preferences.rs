//! The workbench's own choices, kept in the store for the whole installation: which provider
//! runs use (with several configured, something has to say), which one the tenth man uses, and
//! where tools run. The desktop's settings write them; its runs, meter, compression and reviews
//! read them, so the window never has to ask the user for a provider on every action.

use decima_store::{SandboxKind, Store, StoreError};
use serde::{Deserialize, Serialize};

use crate::error::{Result, RuntimeError};

/// The store key they live under.
const KEY: &str = "workbench";

/// What the analyst chose in the settings. Missing fields take their defaults, so settings
/// saved by an older version still load.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Preferences {
    /// The provider runs use; `None` is the only configured one (or the `DECIMA_*` one).
    pub provider: Option<String>,
    /// The tenth man's provider; `None` is the run's own.
    pub reviewer_provider: Option<String>,
    /// Where a run's tools run.
    #[serde(with = "sandbox_text")]
    pub sandbox: SandboxKind,
}

impl Preferences {
    /// The provider to use now. A choice naming a provider that was removed since is an error
    /// that says so, not a silent switch to another provider. With no choice the runtime takes
    /// the only configured provider; with several and no choice, the error says where to choose
    /// (the runtime's own message speaks of the CLI's `--provider`).
    pub async fn provider_in_force(&self, store: &Store) -> Result<Option<String>> {
        check_exists(store, self.provider.as_deref(), "runs").await?;
        if self.provider.is_none() && store.providers().list().await?.len() > 1 {
            return Err(RuntimeError::Config(
                "several providers are configured: choose the one runs use in Settings".into(),
            ));
        }
        Ok(self.provider.clone())
    }

    /// The reviewer's provider to use now, checked the same way.
    pub async fn reviewer_in_force(&self, store: &Store) -> Result<Option<String>> {
        check_exists(store, self.reviewer_provider.as_deref(), "the tenth man").await?;
        Ok(self.reviewer_provider.clone())
    }
}

/// The saved preferences, or the defaults when none were saved.
pub async fn load(store: &Store) -> Result<Preferences> {
    match store.app_settings().get(KEY).await? {
        None => Ok(Preferences::default()),
        Some(value) => serde_json::from_value(value).map_err(|e| {
            RuntimeError::Config(format!(
                "the workbench settings cannot be read ({e}); save them again in Settings"
            ))
        }),
    }
}

/// Saves the preferences after checking that each named provider exists; returns them as
/// stored. Blank names mean "no choice".
pub async fn save(store: &Store, preferences: Preferences) -> Result<Preferences> {
    let blank_is_none =
        |name: Option<String>| name.map(|n| n.trim().to_owned()).filter(|n| !n.is_empty());
    let preferences = Preferences {
        provider: blank_is_none(preferences.provider),
        reviewer_provider: blank_is_none(preferences.reviewer_provider),
        sandbox: preferences.sandbox,
    };
    check_exists(store, preferences.provider.as_deref(), "runs").await?;
    check_exists(
        store,
        preferences.reviewer_provider.as_deref(),
        "the tenth man",
    )
    .await?;
    let value = serde_json::to_value(&preferences)
        .map_err(|e| RuntimeError::Config(format!("the settings cannot be written: {e}")))?;
    store.app_settings().put(KEY, &value).await?;
    Ok(preferences)
}

pub(crate) async fn check_exists(store: &Store, name: Option<&str>, used_by: &str) -> Result<()> {
    let Some(name) = name else { return Ok(()) };
    match store.providers().get_by_name(name).await {
        Ok(_) => Ok(()),
        Err(StoreError::NotFound { .. }) => Err(RuntimeError::Config(format!(
            "the provider '{}' chosen for {used_by} is not configured (it may have been removed); \
             choose another in Settings",
            decima_core::names::echo_untrusted(name)
        ))),
        Err(e) => Err(e.into()),
    }
}

/// `SandboxKind` lives in the store, which does not depend on serde; it is kept as its text.
mod sandbox_text {
    use decima_store::SandboxKind;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(kind: &SandboxKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(kind.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SandboxKind, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
