// Generates the app's ACL from its commands: with an app manifest, only the commands listed here
// exist for the webview, and only capabilities can grant them.
/// Every command the webview may call; bindings.rs and the capability file list the same.
const COMMANDS: &[&str] = &[
    "conversation_list",
    "conversation_create",
    "conversation_rename",
    "conversation_delete",
    "conversation_restore",
    "conversation_busy",
    "message_page",
    "tool_result_images",
    "tool_result_seq",
    "message_set_pinned",
    "message_figures",
    "search_messages",
    "find_in_conversation",
    "context_usage",
    "run_start",
    "run_stop",
    "run_skip_review",
    "run_choose",
    "run_approve",
    "mcp_server_list",
    "mcp_server_add",
    "mcp_server_import",
    "mcp_server_set_enabled",
    "mcp_server_remove",
    "mcp_server_set_place",
    "mcp_server_check",
    "mcp_conversation_list",
    "mcp_conversation_set",
    "execution_recover",
    "execution_resume",
    "execution_list",
    "execution_interrupted",
    "review_run",
    "review_latest",
    "compression_preview",
    "compression_apply",
    "compression_undo",
    "compaction_list",
    "provider_list",
    "provider_names",
    "provider_add",
    "provider_remove",
    "provider_update",
    "provider_pricing_save",
    "provider_test",
    "provider_presets",
    "provider_models",
    "preset_list",
    "preset_import",
    "conversation_export",
    "export_open",
    "export_reveal",
    "conversation_import",
    "conversation_import_dropped",
    "file_drags_watch",
    "sandbox_status",
    "sandbox_image_build",
    "database_get",
    "database_save",
    "database_forget",
    "store_changes_watch",
    "sandbox_engine_get",
    "sandbox_engine_save",
    "app_about",
    "app_menu_watch",
    "app_painted",
    "settings_get",
    "settings_save",
    "provider_thresholds_save",
    "run_options_get",
    "run_options_save",
    "run_options_set_quick",
    "provider_tenth_man_save",
    "workspace_choose",
    "workspace_use_default",
    "workspace_open",
    "workspace_files",
    "workspace_preview",
    "workspace_save_as",
    "workspace_add_dropped",
    "workspace_add_picked",
    "workspace_census",
    "workspace_copy_across",
    "table_save_csv",
    "conversation_title_from_model",
    "conversation_export_report",
    "plan_rollback_preview",
    "plan_rollback",
    "plan_rollback_undo",
];

fn main() {
    let manifest = tauri_build::AppManifest::new().commands(COMMANDS);
    let attributes = tauri_build::Attributes::new()
        .capabilities_path_pattern("./capabilities/**/*")
        .app_manifest(manifest);
    if let Err(error) = tauri_build::try_build(attributes) {
        println!("cargo:warning=tauri-build failed: {error:#}");
        std::process::exit(1);
    }
    // The commit and the day of the build, for the About section (commands/about.rs).
    let stamped = vergen_gitcl::Emitter::default()
        .add_instructions(&vergen_gitcl::Build::builder().build_date(true).build())
        .and_then(|e| e.add_instructions(&vergen_gitcl::Gitcl::builder().sha(true).build()))
        .and_then(|e| e.emit());
    if let Err(error) = stamped {
        println!("cargo:warning=cannot stamp the build: {error:#}");
        std::process::exit(1);
    }
}
