//! Settings and library shapes: providers (never their keys), presets, exports.

use decima_core::context::Thresholds;
use serde::{Deserialize, Serialize};
use specta::Type;

/// A provider as the settings list shows it. Its key never leaves Rust: only whether one is
/// stored.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ProviderView {
    /// Its name.
    pub name: String,
    /// openai or anthropic.
    pub kind: String,
    /// The preset it was made from.
    pub preset: Option<String>,
    /// The endpoint.
    pub base_url: String,
    /// The model.
    pub model: String,
    /// The context window requests are fitted to, in tokens.
    pub context_window: u32,
    /// Where that window comes from: Settings says "8,192 tokens, as the server reports".
    pub context_window_source: WindowSourceView,
    /// The window the server said it serves, when it was last asked.
    pub served_window: Option<u32>,
    /// Whether the server held an answer to a JSON schema at the last connection test.
    pub structured_output: Option<bool>,
    /// Whether the secret store holds a key for it.
    pub has_api_key: bool,
    /// Where the key is kept, so the window says it truthfully: the keyring, or the file
    /// readable only by the user where no keyring service runs (with the file's path).
    pub key_file: Option<String>,
    /// Where its meter warns and compression starts (the ones in force).
    pub thresholds: ThresholdsView,
    /// What it charges, for the cost runs show; `null` when not set.
    pub prices: Option<PricesView>,
    /// Anthropic: how long its prompt cache keeps a prefix, `5m` or `1h`.
    pub cache_ttl: String,
}

/// Where a provider's window comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum WindowSourceView {
    /// The server said it serves it.
    Served,
    /// The preset's, since the server does not say.
    Preset,
    /// The analyst set it.
    Configured,
}

impl From<decima_runtime::settings::WindowSource> for WindowSourceView {
    fn from(source: decima_runtime::settings::WindowSource) -> Self {
        use decima_runtime::settings::WindowSource;
        match source {
            WindowSource::Served => Self::Served,
            WindowSource::Preset => Self::Preset,
            WindowSource::Configured => Self::Configured,
        }
    }
}

/// A provider's prices, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct PricesView {
    /// Input that no cache served.
    pub input: f64,
    /// Input read from the prompt cache.
    pub cached_input: f64,
    /// Input written to the prompt cache.
    pub cache_write: f64,
    /// Output.
    pub output: f64,
}

impl From<decima_llm::Prices> for PricesView {
    fn from(p: decima_llm::Prices) -> Self {
        Self {
            input: p.input,
            cached_input: p.cached_input,
            cache_write: p.cache_write,
            output: p.output,
        }
    }
}

impl From<PricesView> for decima_llm::Prices {
    fn from(p: PricesView) -> Self {
        Self {
            input: p.input,
            cached_input: p.cached_input,
            cache_write: p.cache_write,
            output: p.output,
        }
    }
}

impl ProviderView {
    /// The view of a listed provider. Unreadable settings show the defaults in force.
    pub fn of(listed: decima_runtime::providers::Listed) -> Self {
        let settings = decima_runtime::settings::ProviderSettings::from_record(&listed.record)
            .unwrap_or_default();
        let thresholds = settings.thresholds();
        let record = listed.record;
        Self {
            name: record.name,
            kind: record.kind,
            preset: record.preset,
            base_url: record.base_url,
            model: record.model,
            context_window: record.context_window,
            context_window_source: settings
                .window_source
                .unwrap_or(decima_runtime::settings::WindowSource::Configured)
                .into(),
            served_window: settings.served_window,
            structured_output: settings.structured_output,
            has_api_key: listed.has_api_key,
            key_file: match listed.key_place {
                Some(decima_llm::secrets::SecretBackend::File(path)) => {
                    Some(path.display().to_string())
                }
                _ => None,
            },
            thresholds: ThresholdsView::from(thresholds),
            prices: settings.prices.map(PricesView::from),
            cache_ttl: match settings.cache_ttl.unwrap_or_default() {
                decima_llm::CacheTtl::FiveMinutes => "5m",
                decima_llm::CacheTtl::OneHour => "1h",
            }
            .to_owned(),
        }
    }
}

/// Thresholds as fractions of the window, and whether compression runs on its own.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ThresholdsView {
    /// The meter warns from here.
    pub warn: f64,
    /// Standard compression from here.
    pub compress: f64,
    /// Deep compression from here.
    pub deep: f64,
    /// Whether compression runs on its own when a threshold is crossed.
    pub enabled: bool,
}

impl From<Thresholds> for ThresholdsView {
    fn from(t: Thresholds) -> Self {
        Self {
            warn: t.warn,
            compress: t.compress,
            deep: t.deep,
            enabled: t.enabled,
        }
    }
}

impl From<ThresholdsView> for Thresholds {
    fn from(t: ThresholdsView) -> Self {
        Self {
            warn: t.warn,
            compress: t.compress,
            deep: t.deep,
            enabled: t.enabled,
        }
    }
}

/// The workbench's choices: the provider runs use, the reviewer's, and where tools run.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct WorkbenchSettings {
    /// The provider runs use; `null` is the only configured one.
    pub provider: Option<String>,
    /// The tenth man's provider; `null` is the run's own.
    pub reviewer_provider: Option<String>,
    /// `host` or `docker`.
    pub sandbox: String,
}

impl From<decima_runtime::preferences::Preferences> for WorkbenchSettings {
    fn from(p: decima_runtime::preferences::Preferences) -> Self {
        Self {
            provider: p.provider,
            reviewer_provider: p.reviewer_provider,
            sandbox: p.sandbox.as_str().to_owned(),
        }
    }
}

/// What a connection test measured.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ProviderProbe {
    /// From sending to the end of the answer (or to the failure).
    pub elapsed_ms: u32,
    /// Prompt tokens, when the provider reported usage.
    pub prompt_tokens: Option<u32>,
    /// The window as the server reports it (or the preset's, or the analyst's), read again by
    /// the test; `null` when the test failed before.
    pub context_window: Option<u32>,
    /// Where that window comes from.
    pub context_window_source: Option<WindowSourceView>,
    /// A configured window clamped to the served one, or a server that could not say.
    pub window_warning: Option<String>,
    /// Whether the server held an answer to a JSON schema; `null` where it is not said to.
    pub structured_output: Option<bool>,
    /// Why the test failed, when it did: the window says it in one plain sentence in its own
    /// language, with the details folded under it.
    pub failure: Option<ProbeFailure>,
}

/// A provider test that failed, by kind.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ProbeFailure {
    /// unreachable, unauthorized, not_found, rate_limited, http, timeout or other.
    pub kind: String,
    /// The provider's base URL.
    pub url: String,
    /// The HTTP status, when it answered with one.
    pub status: Option<u16>,
    /// The whole error, for the folded details.
    pub detail: String,
}

/// A preset in the library.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct PresetView {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// st_card, st_preset or native.
    pub kind: String,
    /// The file it came from.
    pub source: Option<String>,
    /// RFC 3339, UTC.
    pub created_at: String,
}

impl From<&decima_store::PresetRecord> for PresetView {
    fn from(p: &decima_store::PresetRecord) -> Self {
        Self {
            id: p.id.clone(),
            name: p.name.clone(),
            kind: p.kind.clone(),
            source: p.source.clone(),
            created_at: p.created_at.to_rfc3339(),
        }
    }
}

/// Where an export went.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ExportView {
    /// The file written.
    pub path: String,
    /// Messages in it.
    pub messages: u32,
}

/// A report written: where, and what it holds.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ReportView {
    /// The HTML file or the folder written.
    pub path: String,
    /// Charts in it.
    pub charts: u32,
    /// CSVs in it.
    pub tables: u32,
    /// The review's findings listed.
    pub findings: u32,
    /// Files named but left out, with why.
    pub left_out: Vec<String>,
}

/// Whether runs can use the Docker sandbox, and which shell runs host commands, for the
/// settings screen.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SandboxStatus {
    /// A Docker engine answered.
    pub docker_available: bool,
    /// Why not, in words a person can act on; empty when it is available.
    pub detail: String,
    /// The analyst's sandbox image, when the engine answered.
    pub image: Option<SandboxImageView>,
    /// The shell that runs commands on the host (PowerShell or `cmd.exe` on Windows, `sh`
    /// elsewhere) and where it is, so the analyst knows which language the agent writes in.
    pub host_shell: Option<String>,
    /// Why no shell was found, when none was: host runs cannot use the shell tool then.
    pub host_shell_problem: String,
}

/// The analyst's sandbox image as the engine holds it, for the settings' Build button.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SandboxImageView {
    /// Its name (`decima-sandbox:latest`).
    pub name: String,
    /// Whether the engine has it.
    pub present: bool,
    /// Whether it was built from this Decima's recipe: a build would change nothing.
    pub current: bool,
    /// Its size in megabytes.
    pub size_mb: Option<u32>,
    /// When it was built (RFC 3339).
    pub created: Option<String>,
    /// Another process on this computer is building it (scripts/run.sh, the CLI, another
    /// window): a Build here waits for that one.
    pub building_elsewhere: bool,
}

impl From<decima_sandbox::docker::image::ImageStatus> for SandboxImageView {
    fn from(s: decima_sandbox::docker::image::ImageStatus) -> Self {
        Self {
            name: s.image,
            present: s.present,
            current: s.current,
            size_mb: s
                .size_bytes
                .map(|b| u32::try_from(b / 1_000_000).unwrap_or(u32::MAX)),
            created: s.created,
            building_elsewhere: false,
        }
    }
}

/// What an image build is doing, as the settings show it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum ImageBuildEvent {
    /// A step began.
    Step {
        /// Which, in English (the build's own words).
        text: String,
    },
    /// A package was fetched or unpacked, or the tool said where it is.
    Progress {
        /// The tool's line.
        line: String,
    },
}

/// A provider preset the first-start setup offers: where it is, its default model and window.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ProviderPresetView {
    /// The preset's name (what `provider_add` takes).
    pub name: String,
    /// How a person calls it.
    pub label: String,
    /// "openai" (OpenAI-compatible) or "anthropic".
    pub kind: String,
    /// Its base URL.
    pub base_url: String,
    /// The model it uses unless told otherwise.
    pub default_model: String,
    /// Its context window.
    pub context_window: u32,
    /// Whether it needs a key.
    pub needs_api_key: bool,
}

/// The models a server lists, or why it did not.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ProviderModels {
    /// Model ids, sorted.
    pub models: Vec<String>,
    /// Why there are none, when the server did not answer the listing.
    pub failure: Option<ProbeFailure>,
}

/// A configured provider by name, with its model: enough to choose it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ProviderName {
    /// Its name.
    pub name: String,
    /// The model it uses.
    pub model: String,
}

/// An MCP server as the settings list shows it: never a secret value, only which variables
/// and headers are set.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct McpServerView {
    /// Its name.
    pub name: String,
    /// `stdio` or `http`.
    pub kind: String,
    /// Where a stdio server runs: `docker` or `host`; `null` for HTTP.
    pub place: Option<String>,
    /// What it runs (the command line) or reaches (the URL), in no language.
    pub summary: String,
    /// Whether runs use it.
    pub enabled: bool,
    /// The environment variables (stdio) or headers (HTTP) it is given, by name.
    pub secret_names: Vec<String>,
    /// How its last start went, by a run or a check in any process; `None` before the first.
    pub status: Option<McpStatusView>,
    /// The only tools of it offered (its own names); empty: all that are not denied.
    pub allow: Vec<String>,
    /// Its tools never offered.
    pub deny: Vec<String>,
}

/// What the add form sets beyond the command or URL and the place. Values of variables,
/// headers and the token go to the keyring, never to the database or back to the window.
#[derive(Debug, Clone, Default, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct McpServerOptions {
    /// `KEY=VALUE` lines: a stdio server's environment variables, or an HTTP server's headers.
    pub variables: String,
    /// An HTTP server's bearer token (with or without `Bearer `).
    pub bearer_token: Option<String>,
    /// A stdio server's working directory.
    pub cwd: Option<String>,
    /// Seconds it may take to start and list its tools (default 30).
    pub startup_timeout_secs: Option<u32>,
    /// Seconds one call may take (default 120).
    pub call_timeout_secs: Option<u32>,
    /// The only tools offered, by the server's names, separated by commas or spaces; blank:
    /// all that are not denied.
    pub allow: String,
    /// Tools never offered, the same way.
    pub deny: String,
}

/// Where a server's last start got to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum McpStartState {
    /// A run or a check is starting it.
    Starting,
    /// It listed its tools.
    Ready,
    /// It did not start.
    Failed,
}

/// A server's last start, for Settings: what it offered, or why it failed with the last lines
/// of its stderr.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct McpStatusView {
    /// Where it got to.
    pub state: McpStartState,
    /// When (milliseconds since the epoch).
    pub at_ms: f64,
    /// Its tools, when ready.
    pub tools: Option<u32>,
    /// The tokens their offers take, when ready.
    pub tokens: Option<u32>,
    /// How long the start took, when ready.
    pub started_ms: Option<u32>,
    /// Why it failed.
    pub error: Option<String>,
    /// The last lines of its stderr, when it failed.
    pub stderr: Vec<String>,
}

impl From<decima_runtime::mcp::status::ServerState> for McpStatusView {
    fn from(state: decima_runtime::mcp::status::ServerState) -> Self {
        use decima_runtime::mcp::status::ServerState;
        let empty = |state, at: decima_core::Timestamp| McpStatusView {
            state,
            at_ms: at.0 as f64,
            tools: None,
            tokens: None,
            started_ms: None,
            error: None,
            stderr: Vec::new(),
        };
        match state {
            ServerState::Starting { since, .. } => empty(McpStartState::Starting, since),
            ServerState::Ready {
                at,
                tools,
                tokens,
                started_ms,
            } => McpStatusView {
                tools: Some(tools),
                tokens: Some(tokens),
                started_ms: Some(u32::try_from(started_ms).unwrap_or(u32::MAX)),
                ..empty(McpStartState::Ready, at)
            },
            ServerState::Failed { at, error, stderr } => McpStatusView {
                error: Some(error),
                stderr,
                ..empty(McpStartState::Failed, at)
            },
        }
    }
}

impl From<&decima_mcp::ServerConfig> for McpServerView {
    fn from(s: &decima_mcp::ServerConfig) -> Self {
        use decima_mcp::Transport;
        let (kind, place, secret_names, summary) = match &s.transport {
            Transport::Stdio {
                env,
                place,
                command,
                args,
                ..
            } => (
                "stdio",
                Some(place.as_str().to_owned()),
                env.keys().cloned().collect(),
                std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Transport::Http { headers, url, .. } => {
                ("http", None, headers.keys().cloned().collect(), url.clone())
            }
        };
        Self {
            name: s.name.clone(),
            kind: kind.to_owned(),
            place,
            summary,
            enabled: s.enabled,
            secret_names,
            status: None,
            allow: s.allow.clone(),
            deny: s.deny.clone(),
        }
    }
}

/// One tool of a checked server.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct McpToolView {
    /// The server's name for it.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The tokens its offer takes in a request.
    pub tokens: u32,
}

/// A server started, listed and stopped: ready, with its tools and what they cost.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct McpCheckView {
    /// Its tools.
    pub tools: Vec<McpToolView>,
    /// The tokens all their offers take.
    pub tokens: u32,
    /// How long it took to start and list them.
    pub started_ms: u32,
}

/// One server as a conversation uses it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct McpSwitchView {
    /// The server.
    pub name: String,
    /// Whether runs use it at all (the settings' switch).
    pub enabled: bool,
    /// Whether this conversation's runs use it (its own switch).
    pub on_here: bool,
}

/// Which store this desktop opens, for Settings. Never a password.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseView {
    /// The shared database Settings saved (its URL without the password); `None`: this
    /// computer's file.
    pub saved_url: Option<String>,
    /// `DECIMA_DATABASE_URL` from the app's environment (password hidden), which wins.
    pub from_environment: Option<String>,
    /// The store open now: a file's path, or a URL with its password hidden.
    pub open: String,
    /// Whether the open store is a shared database.
    pub shared: bool,
    /// Whether a saved password is in the system keyring.
    pub password_in_keyring: bool,
    /// The file a saved password is in, where no keyring service answered (readable by the
    /// user only).
    pub password_file: Option<String>,
    /// Whether the saved choice differs from the open store: it takes effect at the next
    /// start.
    pub restart_needed: bool,
    /// Why the saved shared database was not opened at start (this computer's file was).
    pub open_error: Option<String>,
}

/// Something another desktop wrote to the shared store: read it again.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct StoreChange {
    /// The conversation to read again; `None` for a change that concerns none.
    pub conversation_id: Option<String>,
    /// The lowest seq written, for a message.
    pub seq: Option<u32>,
    /// The connection to the server was lost and is back: read everything shown again.
    pub reconnected: bool,
}

/// Which Docker engine this desktop's runs use.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct EngineChoiceView {
    /// A remote engine (`tcp://HOST:PORT`); `None`: this computer's.
    pub host: Option<String>,
    /// The folder of its `ca.pem`, `cert.pem` and `key.pem`.
    pub cert_path: Option<String>,
    /// `DOCKER_HOST` from the app's environment, which wins over the choice.
    pub from_environment: Option<String>,
}
