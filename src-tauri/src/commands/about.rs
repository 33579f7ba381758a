//! What the About section of Settings shows: the release, the commit and the day of the build,
//! the same three `decima --version` prints, so that an analyst's report names the exact code.

use serde::Serialize;

/// The build this window runs. Stamped at compile time by build.rs.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct AppAbout {
    /// The release, one for the workspace and the app (Cargo.toml's `workspace.package`).
    pub version: String,
    /// The commit the app was built from, abbreviated as `git rev-parse --short` does.
    pub commit: String,
    /// The day of the build, `YYYY-MM-DD` in UTC.
    pub built: String,
}

impl AppAbout {
    /// This binary's own stamp.
    pub fn current() -> Self {
        Self {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            commit: env!("VERGEN_GIT_SHA").to_owned(),
            built: env!("VERGEN_BUILD_DATE").to_owned(),
        }
    }
}

/// The release, commit and build date of this app.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "app_about"))]
pub fn app_about() -> AppAbout {
    AppAbout::current()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stamp_is_the_workspace_release_and_a_commit() {
        let about = AppAbout::current();
        assert_eq!(about.version, env!("CARGO_PKG_VERSION"));
        assert!(
            about.commit.len() >= 7 && about.commit.chars().all(|c| c.is_ascii_hexdigit()),
            "{}",
            about.commit
        );
        assert_eq!(about.built.len(), 10, "{}", about.built);
    }

    /// One version for the workspace and the app: tauri.conf.json and the UI's package.json
    /// name none (Tauri then takes Cargo's), and the changelog has this release's entry.
    #[test]
    fn the_release_is_named_once_and_in_the_changelog() {
        let conf: serde_json::Value =
            serde_json::from_str(include_str!("../../tauri.conf.json")).unwrap();
        assert!(
            conf.get("version").is_none(),
            "tauri.conf.json names a version"
        );
        let ui: serde_json::Value =
            serde_json::from_str(include_str!("../../../ui/package.json")).unwrap();
        assert!(
            ui.get("version").is_none(),
            "ui/package.json names a version"
        );
        let changelog = include_str!("../../../CHANGELOG.md");
        let entry = format!("\n## [{}] - ", env!("CARGO_PKG_VERSION"));
        assert!(
            changelog.contains(&entry),
            "CHANGELOG.md has no entry {entry:?}"
        );
    }
}
