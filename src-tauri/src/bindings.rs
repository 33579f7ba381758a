//! The command registry and its TypeScript bindings.
//!
//! `ui/src/bindings.ts` is generated from [`builder`]; a test fails when the committed file is
//! stale. Regenerate with `DECIMA_UPDATE_BINDINGS=1 cargo test --lib bindings`.

use std::path::Path;

use specta_typescript::Typescript;
use tauri_specta::{Builder, collect_commands};

use crate::app_menu;
use crate::commands::{
    about, compression, context, conversations, database, engine, executions, export, import,
    library, mcp, messages, plan_rollback, report, reviews, run_options, runs, search, settings,
    startup, tables, titles, workspace, workspace_switch,
};

/// Where the generated bindings live, relative to this crate (`src-tauri/`).
pub const BINDINGS_PATH: &str = "../ui/src/bindings.ts";

/// Every command the webview can call. The ACL in build.rs and the capability file list the same
/// names; a test keeps the three in step.
pub fn builder() -> Builder<tauri::Wry> {
    // DTOs only travel from Rust to the webview, so one TypeScript type per DTO (the serialised
    // shape) is exact; serde phases would split each into _Serialize and _Deserialize twins.
    Builder::<tauri::Wry>::new()
        .disable_serde_phases()
        .commands(collect_commands![
            conversations::conversation_list,
            conversations::conversation_create,
            conversations::conversation_rename,
            conversations::conversation_delete,
            conversations::conversation_restore,
            conversations::conversation_busy,
            messages::message_page,
            messages::tool_result_images,
            messages::tool_result_seq,
            messages::message_set_pinned,
            messages::message_figures,
            search::search_messages,
            search::find_in_conversation,
            context::context_usage,
            runs::run_start,
            runs::run_stop,
            runs::run_skip_review,
            runs::run_choose,
            runs::run_approve,
            mcp::mcp_server_list,
            mcp::mcp_server_add,
            mcp::mcp_server_import,
            mcp::mcp_server_set_enabled,
            mcp::mcp_server_remove,
            mcp::mcp_server_set_place,
            mcp::mcp_server_check,
            mcp::mcp_conversation_list,
            mcp::mcp_conversation_set,
            runs::execution_recover,
            runs::execution_resume,
            executions::execution_list,
            executions::execution_interrupted,
            reviews::review_run,
            reviews::review_latest,
            compression::compression_preview,
            compression::compression_apply,
            compression::compression_undo,
            compression::compaction_list,
            library::provider_list,
            library::provider_names,
            library::provider_add,
            library::provider_remove,
            library::provider_update,
            library::provider_pricing_save,
            library::provider_test,
            library::provider_presets,
            library::provider_models,
            library::preset_list,
            library::preset_import,
            export::conversation_export,
            export::export_open,
            export::export_reveal,
            import::conversation_import,
            import::conversation_import_dropped,
            import::file_drags_watch,
            library::sandbox_status,
            library::sandbox_image_build,
            database::database_get,
            database::database_save,
            database::database_forget,
            database::store_changes_watch,
            engine::sandbox_engine_get,
            engine::sandbox_engine_save,
            about::app_about,
            app_menu::app_menu_watch,
            startup::app_painted,
            settings::settings_get,
            settings::settings_save,
            settings::provider_thresholds_save,
            run_options::run_options_get,
            run_options::run_options_save,
            run_options::run_options_set_quick,
            run_options::provider_tenth_man_save,
            run_options::workspace_choose,
            run_options::workspace_use_default,
            run_options::workspace_open,
            workspace::workspace_files,
            workspace::workspace_preview,
            workspace::workspace_save_as,
            workspace::workspace_add_dropped,
            workspace::workspace_add_picked,
            workspace_switch::workspace_census,
            workspace_switch::workspace_copy_across,
            tables::table_save_csv,
            titles::conversation_title_from_model,
            report::conversation_export_report,
            plan_rollback::plan_rollback_preview,
            plan_rollback::plan_rollback,
            plan_rollback::plan_rollback_undo,
        ])
}

/// Writes the TypeScript bindings to `path`.
pub fn export(path: &Path) -> Result<(), String> {
    builder()
        .export(
            Typescript::default().header(
                "// Generated from src-tauri by tauri-specta. Do not edit.\n// @ts-nocheck",
            ),
            path,
        )
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_are_fresh() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let committed = root.join(BINDINGS_PATH);
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("bindings.ts");
        export(&fresh).unwrap();
        let fresh = std::fs::read_to_string(fresh).unwrap();
        if std::env::var_os("DECIMA_UPDATE_BINDINGS").is_some() {
            std::fs::write(&committed, &fresh).unwrap();
        }
        let current = std::fs::read_to_string(&committed).unwrap_or_default();
        assert!(
            current == fresh,
            "{BINDINGS_PATH} is stale: run `DECIMA_UPDATE_BINDINGS=1 cargo test --lib bindings` and commit it"
        );
    }

    #[test]
    fn acl_capability_and_registry_list_the_same_commands() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let build_rs = std::fs::read_to_string(root.join("build.rs")).unwrap();
        let capability = std::fs::read_to_string(root.join("capabilities/default.json")).unwrap();
        let bindings = std::fs::read_to_string(root.join(BINDINGS_PATH)).unwrap();
        let invoked: Vec<&str> = bindings
            .split("TAURI_INVOKE(\"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .collect();
        assert_eq!(invoked.len(), 86, "{invoked:?}");
        for command in invoked {
            assert!(
                build_rs.contains(&format!("\"{command}\"")),
                "{command} missing from the app manifest"
            );
            let permission = format!("\"allow-{}\"", command.replace('_', "-"));
            assert!(
                capability.contains(&permission),
                "{permission} missing from the capability"
            );
        }
    }
}
