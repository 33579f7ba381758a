//! `decima preset list|show`

use std::fmt::Write as _;

use decima_store::{PresetRecord, Store};
use serde::Serialize;

use crate::args::PresetCommand;
use crate::error::CliError;
use crate::output;

#[derive(Serialize)]
struct PresetJson<'a> {
    id: &'a str,
    name: &'a str,
    kind: &'a str,
    source: Option<&'a str>,
    created_at: String,
}

impl<'a> From<&'a PresetRecord> for PresetJson<'a> {
    fn from(p: &'a PresetRecord) -> Self {
        Self {
            id: &p.id,
            name: &p.name,
            kind: &p.kind,
            source: p.source.as_deref(),
            created_at: p.created_at.to_rfc3339(),
        }
    }
}

pub async fn run(store: &Store, command: PresetCommand) -> Result<(), CliError> {
    match command {
        PresetCommand::List { json } => {
            let presets = store.presets().list().await?;
            if json {
                let rows: Vec<PresetJson> = presets.iter().map(PresetJson::from).collect();
                return output::print_json(&rows);
            }
            let mut text = format!("{:<36}  {:<9}  NAME\n", "ID", "KIND");
            for p in &presets {
                let _ = writeln!(text, "{:<36}  {:<9}  {}", p.id, p.kind, p.name);
            }
            output::print(&text)
        }
        PresetCommand::Show { id } => {
            let preset = store.presets().get(&id).await?;
            output::print_json(&serde_json::json!({
                "id": preset.id,
                "name": preset.name,
                "kind": preset.kind,
                "source": preset.source,
                "created_at": preset.created_at.to_rfc3339(),
                "body": preset.body,
            }))
        }
    }
}
