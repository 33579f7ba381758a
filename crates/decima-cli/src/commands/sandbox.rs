//! `decima sandbox image build|status`: the analyst's sandbox image, built from the project's
//! recipe (see `decima_sandbox::docker::image`).

use std::io::Write as _;
use std::path::Path;

use decima_sandbox::DockerConfig;
use decima_sandbox::docker::image::{self, BuildEvent, ImageStatus};

use crate::args::{ImageCommand, SandboxCommand};
use crate::error::CliError;

/// Runs a `sandbox` command.
pub async fn run(data_dir: &Path, cmd: SandboxCommand) -> Result<(), CliError> {
    let SandboxCommand::Image(cmd) = cmd;
    let engine = decima_runtime::docker::engine(data_dir)
        .await
        .map_err(|e| CliError::Sandbox(e.to_string()))?;
    let name = DockerConfig::DEFAULT_IMAGE;
    match cmd {
        ImageCommand::Status { json } => {
            let status = engine
                .image_status(name)
                .await
                .map_err(|e| CliError::Sandbox(e.to_string()))?;
            let mut out = std::io::stdout().lock();
            let text = if json {
                serde_json::to_string(&status).map_err(|e| CliError::Sandbox(e.to_string()))?
            } else {
                describe(&status)
            };
            writeln!(out, "{text}").map_err(CliError::Output)
        }
        ImageCommand::Build { force } => {
            let mirror = std::env::var("DECIMA_DEBIAN_MIRROR")
                .ok()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| image::DEFAULT_MIRROR.to_owned());
            let started = std::time::Instant::now();
            let shown = |event: BuildEvent| {
                let line = match event {
                    BuildEvent::Step(step) => format!("[image] {step}"),
                    BuildEvent::Progress(line) => format!("[image]   {line}"),
                };
                eprintln!("{line}");
            };
            let status = engine
                .build_sandbox_image(name, &mirror, force, &shown)
                .await
                .map_err(|e| CliError::Sandbox(e.to_string()))?;
            eprintln!("[image] done in {:.0} s", started.elapsed().as_secs_f64());
            writeln!(std::io::stdout().lock(), "{}", describe(&status)).map_err(CliError::Output)
        }
    }
}

/// One line about the image, for a person.
fn describe(status: &ImageStatus) -> String {
    if !status.present {
        return format!(
            "{}: not built (recipe {}); build it with `decima sandbox image build`",
            status.image, status.wanted_recipe
        );
    }
    let recipe = match (&status.recipe, status.current) {
        (Some(r), true) => format!("built from recipe {r}, the current one"),
        (Some(r), false) => format!(
            "built from recipe {r}, not the current {}: `decima sandbox image build` rebuilds it",
            status.wanted_recipe
        ),
        (None, _) => "not built from Decima's recipe (another image under this name)".to_owned(),
    };
    let size = status
        .size_bytes
        .map_or(String::new(), |b| format!(", {} MB", b / 1_000_000));
    let created = status
        .created
        .as_deref()
        .map_or(String::new(), |c| format!(", created {c}"));
    format!("{}: {recipe}{size}{created}", status.image)
}
