//! Settings and library shapes: providers (never their keys), presets, exports.

use serde::Serialize;
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
    /// The context window, in tokens.
    pub context_window: u32,
    /// Whether the secret store holds a key for it.
    pub has_api_key: bool,
}

/// What a connection test measured.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ProviderProbe {
    /// From sending to the end of the answer.
    pub elapsed_ms: u32,
    /// Prompt tokens, when the provider reported usage.
    pub prompt_tokens: Option<u32>,
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

/// Whether runs can use the Docker sandbox, for the settings screen.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SandboxStatus {
    /// A Docker engine answered.
    pub docker_available: bool,
    /// Why not, in words a person can act on; empty when it is available.
    pub detail: String,
}
