//! A conversation's own run options, beside its composer: the provider its runs use, where
//! their tools run, how many model calls a run may make, and where the tenth man runs. Each one
//! left unset follows the workbench's settings ([`crate::preferences`]) or the runtime's
//! default, so a conversation only records what the analyst changed for it.

use decima_core::ConversationId;
use decima_store::{SandboxKind, Store};
use serde::{Deserialize, Serialize};

use crate::error::{Result, RuntimeError};
use crate::preferences::{self, Preferences};
use crate::review::TenthManMode;

/// The most model calls a run may be given: far beyond any sane run, short of a runaway.
pub const MAX_STEPS_LIMIT: u32 = 1_000;

/// What a conversation chose for its runs. Unset fields follow the settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ConversationOptions {
    /// The provider its runs use, by name.
    pub provider: Option<String>,
    /// Where their tools run: "host" or "docker".
    pub sandbox: Option<String>,
    /// Model calls a run may make.
    pub max_steps: Option<u32>,
    /// Where the tenth man runs.
    pub tenth_man: Option<TenthManMode>,
    /// The folder its host runs work in (absolute); unset: the data folder's
    /// `workspaces/<conversation id>`.
    pub workspace: Option<String>,
    /// Its messages are quick chats: answered with no tools, plan or review (the toggle
    /// beside Send, remembered per conversation).
    pub quick: bool,
}

/// The options a run of this conversation starts with, the settings filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InForce {
    /// The provider by name (`None`: the only configured one).
    pub provider: Option<String>,
    /// Where tools run.
    pub sandbox: SandboxKind,
    /// Model calls a run may make, when the conversation set it.
    pub max_steps: Option<u32>,
    /// Where the tenth man runs, when the conversation set it.
    pub tenth_man: Option<TenthManMode>,
    /// The folder host runs work in, when the conversation chose one.
    pub workspace: Option<std::path::PathBuf>,
    /// A quick chat: no tools, plan or review.
    pub quick: bool,
}

impl ConversationOptions {
    /// The sandbox as the runtime names it.
    fn sandbox_kind(&self) -> Result<Option<SandboxKind>> {
        self.sandbox
            .as_deref()
            .map(|s| {
                s.parse::<SandboxKind>().map_err(|_| {
                    RuntimeError::Config(format!(
                        "the sandbox must be host or docker, not '{}'",
                        decima_core::names::echo_untrusted(s)
                    ))
                })
            })
            .transpose()
    }

    /// Refuses what a run could not start with: a provider that is not configured, an unknown
    /// sandbox, a step budget of zero or past [`MAX_STEPS_LIMIT`].
    async fn check(&self, store: &Store) -> Result<()> {
        preferences::check_exists(store, self.provider.as_deref(), "this conversation").await?;
        self.sandbox_kind()?;
        if let Some(steps) = self.max_steps
            && !(1..=MAX_STEPS_LIMIT).contains(&steps)
        {
            return Err(RuntimeError::Config(format!(
                "a run may make between 1 and {MAX_STEPS_LIMIT} model calls, not {steps}"
            )));
        }
        if let Some(folder) = &self.workspace {
            let path = std::path::Path::new(folder);
            if !path.is_absolute() || !path.is_dir() {
                return Err(RuntimeError::Config(format!(
                    "the workspace {} is not a folder on this computer; choose another",
                    decima_core::names::echo_untrusted(folder)
                )));
            }
        }
        Ok(())
    }

    /// Where its runs work, over the settings: the sandbox, and the host folder it chose (none:
    /// the default). Unlike [`Self::in_force`], a removed provider does not matter here.
    pub fn place(
        &self,
        settings: &Preferences,
    ) -> Result<(SandboxKind, Option<std::path::PathBuf>)> {
        Ok((
            self.sandbox_kind()?.unwrap_or(settings.sandbox),
            self.workspace.as_ref().map(std::path::PathBuf::from),
        ))
    }

    /// These options over the settings: what a run of the conversation starts with. The
    /// conversation's provider is checked again, since it may have been removed since.
    pub async fn in_force(&self, store: &Store, settings: &Preferences) -> Result<InForce> {
        if self.provider.is_some() || self.workspace.is_some() {
            self.check(store).await?;
        }
        let provider = match &self.provider {
            Some(_) => self.provider.clone(),
            None => settings.provider_in_force(store).await?,
        };
        Ok(InForce {
            provider,
            sandbox: self.sandbox_kind()?.unwrap_or(settings.sandbox),
            max_steps: self.max_steps,
            tenth_man: self.tenth_man,
            workspace: self.workspace.as_ref().map(std::path::PathBuf::from),
            quick: self.quick,
        })
    }
}

/// Where a conversation's options are kept among the installation's settings (whose keys are
/// `a-z`, digits, `.` and `_`).
fn key(conversation: ConversationId) -> String {
    format!("run_options.{}", conversation.to_string().replace('-', "_"))
}

/// The conversation's options (all unset when it never changed any).
pub async fn load(store: &Store, conversation: ConversationId) -> Result<ConversationOptions> {
    store.conversations().get(conversation).await?;
    match store.app_settings().get(&key(conversation)).await? {
        None => Ok(ConversationOptions::default()),
        Some(value) => serde_json::from_value(value).map_err(|e| {
            RuntimeError::Config(format!(
                "this conversation's run options cannot be read ({e}); set them again"
            ))
        }),
    }
}

/// Checks and stores the conversation's options.
pub async fn save(
    store: &Store,
    conversation: ConversationId,
    options: ConversationOptions,
) -> Result<ConversationOptions> {
    store.conversations().get(conversation).await?;
    let options = ConversationOptions {
        provider: options
            .provider
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty()),
        ..options
    };
    options.check(store).await?;
    let value = serde_json::to_value(&options)
        .map_err(|e| RuntimeError::Config(format!("cannot store the run options: {e}")))?;
    store.app_settings().put(&key(conversation), &value).await?;
    Ok(options)
}
