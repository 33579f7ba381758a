//! The analyst's sandbox image, `decima-sandbox:latest`, built by Decima itself without any
//! image registry: `mmdebstrap` installs the recipe's Debian packages into a root filesystem
//! (from Debian's archive, which analysts' proxies let through), the recipe's script customises
//! it, and the tar it packs streams straight into the engine's import (`docker import`), with
//! the image's user, workdir and environment. The image carries the recipe's hash as a label,
//! so it is built again only when the recipe changes.
//!
//! The recipe is the project's `sandbox/` folder, compiled in: what a binary builds is what its
//! source says.

use std::process::Stdio;

use bollard::query_parameters::{CreateImageOptions, RemoveImageOptions, TagImageOptions};
use futures_util::StreamExt as _;
use serde::Serialize;
use sha2::{Digest as _, Sha256};
use tokio::io::{AsyncBufReadExt as _, BufReader};

use super::engine::status;
use super::{DockerConfig, DockerEngine, DockerSandbox};
use crate::SandboxError;
use crate::host::{Sandbox as _, ShellRequest};

/// The Debian packages, one per line (comments with `#`).
const PACKAGES: &str = include_str!("../../../../sandbox/packages");
/// What runs on the root filesystem once the packages are in.
const CUSTOMIZE: &str = include_str!("../../../../sandbox/customize.sh");
/// The Debian release the image is built from.
const SUITE: &str = "bookworm";
/// The label that holds the recipe's hash.
pub const RECIPE_LABEL: &str = "decima.recipe";
/// Where packages come from unless `DECIMA_DEBIAN_MIRROR` names another mirror.
pub const DEFAULT_MIRROR: &str = "http://deb.debian.org/debian";
/// The image's settings, as `docker import --change` takes them.
const CHANGES: [&str; 7] = [
    "USER 1000:1000",
    "WORKDIR /workspace",
    "ENV LANG=C.UTF-8",
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    // matplotlib and fontconfig write caches; the root filesystem is read-only and the
    // workspace is the analyst's, so they go to the container's /tmp.
    "ENV MPLCONFIGDIR=/tmp/matplotlib",
    "ENV XDG_CACHE_HOME=/tmp/cache",
    "CMD [\"/bin/bash\"]",
];
/// The commands the sandbox and the agent rely on, checked in an image someone else chose.
pub const TOOLS: [&str; 8] = [
    "sh", "setsid", "python3", "sqlite3", "jq", "git", "node", "csvlook",
];

/// The recipe's packages, in order.
pub fn packages() -> Vec<&'static str> {
    PACKAGES
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The recipe's hash: the release, the packages, the script and the image's settings. An image
/// whose label differs is out of date.
pub fn recipe_hash() -> String {
    let mut hasher = Sha256::new();
    for part in [
        SUITE,
        &packages().join(","),
        CUSTOMIZE,
        &CHANGES.join("\n"),
        "no-recommends",
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What the engine holds of the sandbox image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImageStatus {
    /// The image's name.
    pub image: String,
    /// Whether the engine has it.
    pub present: bool,
    /// The engine's id of it.
    pub id: Option<String>,
    /// The recipe it was built from (its label); `None` for an image built otherwise.
    pub recipe: Option<String>,
    /// The recipe this Decima builds.
    pub wanted_recipe: String,
    /// Whether it was built from this recipe: a build would change nothing.
    pub current: bool,
    /// Its size in bytes.
    pub size_bytes: Option<u64>,
    /// When it was made (RFC 3339, as the engine says it).
    pub created: Option<String>,
}

/// What a build is doing, for whoever shows its progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildEvent {
    /// A step began.
    Step(&'static str),
    /// A line of the package tool's own progress (downloads, unpacking, configuring).
    Progress(String),
}

impl DockerEngine {
    /// The sandbox image `image` as the engine holds it.
    pub async fn image_status(&self, image: &str) -> Result<ImageStatus, SandboxError> {
        let wanted_recipe = recipe_hash();
        let inspected = self
            .answer("inspect the image", self.client().inspect_image(image))
            .await?;
        let found = match inspected {
            Ok(found) => found,
            Err(e) if status(&e) == Some(404) => {
                return Ok(ImageStatus {
                    image: image.to_owned(),
                    present: false,
                    id: None,
                    recipe: None,
                    wanted_recipe,
                    current: false,
                    size_bytes: None,
                    created: None,
                });
            }
            Err(e) => return Err(super::engine::engine_error("inspect the image", e)),
        };
        let recipe = found
            .config
            .as_ref()
            .and_then(|c| c.labels.as_ref())
            .and_then(|l| l.get(RECIPE_LABEL))
            .cloned();
        Ok(ImageStatus {
            image: image.to_owned(),
            present: true,
            id: found.id.clone(),
            current: recipe.as_deref() == Some(wanted_recipe.as_str()),
            recipe,
            wanted_recipe,
            size_bytes: found.size.and_then(|s| u64::try_from(s).ok()),
            created: found.created,
        })
    }

    /// Builds the sandbox image as `image` from the recipe, unless it is current and `force`
    /// is not set. Packages come from `mirror`. The new image is imported under a build tag and
    /// takes `image`'s name only once the package tool finished without error: a failed or
    /// interrupted build never replaces a working image.
    pub async fn build_sandbox_image(
        &self,
        image: &str,
        mirror: &str,
        force: bool,
        progress: &(dyn Fn(BuildEvent) + Send + Sync),
    ) -> Result<ImageStatus, SandboxError> {
        // One build of an image at a time on this computer, whichever process asks (a window,
        // `decima sandbox image build`, scripts/run.sh in the background): a second waits, then
        // finds the image current.
        let _lock = BuildLock::take_or_wait(image, progress).await?;
        let before = self.image_status(image).await?;
        if before.current && !force {
            return Ok(before);
        }
        let (repo, tag) = image.rsplit_once(':').unwrap_or((image, "latest"));
        let building = format!("building-{}", recipe_hash());
        let dir = tempfile_dir().map_err(|e| failed(format!("no folder for the recipe: {e}")))?;
        let script = dir.0.join("customize.sh");
        std::fs::write(&script, CUSTOMIZE)
            .map_err(|e| failed(format!("the recipe's script could not be written: {e}")))?;

        progress(BuildEvent::Step(
            "installing the packages into a root filesystem",
        ));
        let tool = start_mmdebstrap(mirror, &script)?;
        let built = self.import_built(tool, repo, &building, progress).await?;
        progress(BuildEvent::Step("naming the image"));
        self.call(
            "tag the sandbox image",
            self.client().tag_image(
                &built,
                Some(TagImageOptions {
                    repo: Some(repo.to_owned()),
                    tag: Some(tag.to_owned()),
                }),
            ),
        )
        .await?;
        // The build tag goes; the image stays under its name. The image it replaced goes too,
        // unless a container still uses it (the engine refuses then, and it stays, unnamed).
        let _ = self
            .client()
            .remove_image(&built, None::<RemoveImageOptions>, None)
            .await;
        if let Some(old) = before.id.filter(|_| before.present) {
            let _ = self
                .client()
                .remove_image(&old, None::<RemoveImageOptions>, None)
                .await;
        }
        self.image_status(image).await
    }

    /// Imports the root filesystem mmdebstrap writes as `repo:building`, passing its progress
    /// lines on. The imported image's name when the tool and the import both succeeded; else
    /// the half-built image is removed and the error carries the tool's last lines.
    async fn import_built(
        &self,
        mut tool: tokio::process::Child,
        repo: &str,
        building: &str,
        progress: &(dyn Fn(BuildEvent) + Send + Sync),
    ) -> Result<String, SandboxError> {
        let (Some(stdout), Some(stderr)) = (tool.stdout.take(), tool.stderr.take()) else {
            return Err(failed("mmdebstrap's output could not be read".into()));
        };
        // The tool's progress lines, the last few kept for an error.
        let tail = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let lines = {
            let tail = tail.clone();
            async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if shown(&line) {
                        progress(BuildEvent::Progress(line.clone()));
                    }
                    if let Ok(mut tail) = tail.lock() {
                        tail.push(line);
                        let len = tail.len();
                        if len > 12 {
                            tail.drain(..len - 12);
                        }
                    }
                }
            }
        };
        let mut options = CreateImageOptions {
            from_src: Some("-".into()),
            repo: Some(repo.to_owned()),
            tag: Some(building.to_owned()),
            changes: CHANGES.iter().map(|c| (*c).to_owned()).collect(),
            ..Default::default()
        };
        options
            .changes
            .push(format!("LABEL {RECIPE_LABEL}={}", recipe_hash()));
        let body = bollard::body_try_stream(tokio_util::io::ReaderStream::new(stdout));
        let import = async {
            let mut stream = self.client().create_image(Some(options), Some(body), None);
            let mut result = Ok(());
            while let Some(item) = stream.next().await {
                if let Err(e) = item {
                    result = Err(e.to_string());
                }
            }
            result
        };
        let ((), imported) = tokio::join!(lines, import);
        let exit = tool
            .wait()
            .await
            .map_err(|e| failed(format!("mmdebstrap could not be waited for: {e}")))?;
        let said = tail.lock().map(|t| t.join("\n")).unwrap_or_default();
        let built = format!("{repo}:{building}");
        if !exit.success() || imported.is_err() {
            let _ = self
                .client()
                .remove_image(&built, None::<RemoveImageOptions>, None)
                .await;
            let why = match imported {
                Err(e) if exit.success() => format!("the engine refused the import: {e}"),
                _ => format!("mmdebstrap failed ({exit}); its last lines:\n{said}"),
            };
            return Err(failed(why));
        }
        Ok(built)
    }
}

/// An error of the image's build, saying what went wrong.
fn failed(message: String) -> SandboxError {
    SandboxError::Docker {
        action: "build the sandbox image".into(),
        message,
    }
}

/// Starts mmdebstrap writing the recipe's root filesystem as a tar to its stdout.
fn start_mmdebstrap(
    mirror: &str,
    script: &std::path::Path,
) -> Result<tokio::process::Child, SandboxError> {
    tokio::process::Command::new("mmdebstrap")
        // apt's and dpkg's own lines: each package fetched and unpacked, for the progress.
        .arg("--verbose")
        .arg("--variant=essential")
        .arg(format!("--include={}", packages().join(",")))
        .arg(format!("--customize-hook=sh '{}' \"$1\"", script.display()))
        .arg("--aptopt=Acquire::Retries \"3\"")
        .arg("--aptopt=APT::Install-Recommends \"false\"")
        // The root filesystem is thrown away if the build fails: dpkg need not sync each
        // file (a build took 6.5 minutes with it, 2 without).
        .arg("--dpkgopt=force-unsafe-io")
        .arg("--format=tar")
        .arg(SUITE)
        .arg("-")
        .arg(mirror)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            failed(if e.kind() == std::io::ErrorKind::NotFound {
                "mmdebstrap is not installed: install it (apt-get install mmdebstrap), or run \
                 scripts/run.sh, which does"
                    .into()
            } else {
                format!("mmdebstrap could not start: {e}")
            })
        })
}

impl DockerEngine {
    /// The commands of [`TOOLS`] that an image lacks, run with `config`'s settings in a
    /// container made for the check and removed after it: what the agent will not find there.
    pub async fn missing_tools(&self, config: &DockerConfig) -> Result<Vec<String>, SandboxError> {
        let key = format!("tool-check-{}", uuid::Uuid::now_v7().simple());
        let sandbox = DockerSandbox::new(self.clone(), config.clone(), &key)?;
        let script = format!(
            "for t in {}; do command -v \"$t\" >/dev/null 2>&1 || echo \"$t\"; done",
            TOOLS.join(" ")
        );
        let checked = sandbox.exec(ShellRequest::new(script)).await;
        let removed = sandbox.remove(true).await;
        let outcome = checked.map_err(|e| SandboxError::Docker {
            action: "check the image's tools".into(),
            message: e.message,
        })?;
        removed?;
        Ok(outcome
            .output
            .lines()
            .map(str::trim)
            .filter(|t| TOOLS.contains(t))
            .map(str::to_owned)
            .collect())
    }
}

/// Whether a line of the package tool's output says how far the build is: its own steps and
/// warnings, and apt's and dpkg's line per package fetched, unpacked and set up (the rest of
/// `--verbose` is kept only for an error's last lines).
fn shown(line: &str) -> bool {
    ["I: ", "W: ", "E: ", "Get:", "Unpacking ", "Setting up "]
        .iter()
        .any(|p| line.starts_with(p))
}

/// A folder removed when dropped, however the build ends.
struct ScratchDir(std::path::PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A private folder for the recipe's script while it runs.
/// An exclusive `flock` on a file named after the image in the temporary folder, held while
/// the image is built; the kernel lets it go with the process, however it ends.
struct BuildLock(#[allow(dead_code)] std::fs::File);

impl BuildLock {
    fn path(image: &str) -> std::path::PathBuf {
        let name: String = image
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        std::env::temp_dir().join(format!("decima-image-build-{name}.lock"))
    }

    fn open(image: &str) -> std::io::Result<std::fs::File> {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(Self::path(image))
            // Made by another user: a lock needs no write access.
            .or_else(|_| std::fs::File::open(Self::path(image)))
    }

    /// The lock, or `None` when another build holds it.
    fn try_take(image: &str) -> std::io::Result<Option<Self>> {
        let file = Self::open(image)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Self(file))),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }

    /// The lock: at once when it is free, else after saying so, once the other build ends.
    async fn take_or_wait(
        image: &str,
        progress: &(dyn Fn(BuildEvent) + Send + Sync),
    ) -> Result<Self, SandboxError> {
        let taken = |e: std::io::Error| failed(format!("the build's lock could not be taken: {e}"));
        if let Some(lock) = Self::try_take(image).map_err(taken)? {
            return Ok(lock);
        }
        progress(BuildEvent::Step(
            "waiting for another build of the image on this computer to finish",
        ));
        Self::take(image).await.map_err(taken)
    }

    /// The lock, once the build that holds it ends.
    async fn take(image: &str) -> std::io::Result<Self> {
        let file = Self::open(image)?;
        tokio::task::spawn_blocking(move || {
            file.lock()?;
            Ok(Self(file))
        })
        .await
        .map_err(std::io::Error::other)?
    }
}

/// Whether a build of `image` is running on this computer, in this process or another.
pub fn build_running(image: &str) -> bool {
    matches!(BuildLock::try_take(image), Ok(None))
}

fn tempfile_dir() -> std::io::Result<ScratchDir> {
    let dir = std::env::temp_dir().join(format!("decima-image-{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir(&dir)?;
    Ok(ScratchDir(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_build_of_an_image_at_a_time_and_a_second_waits_for_the_first() {
        let image = format!("decima-lock-test:{}", std::process::id());
        assert!(!build_running(&image));
        let first = BuildLock::try_take(&image).unwrap().expect("free");
        assert!(
            build_running(&image),
            "seen while held, even in this process"
        );
        assert!(BuildLock::try_take(&image).unwrap().is_none());
        let started = std::time::Instant::now();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(first);
        });
        let _second = BuildLock::take(&image).await.unwrap();
        assert!(started.elapsed() >= std::time::Duration::from_millis(250));
        release.join().unwrap();
        drop(_second);
        assert!(!build_running(&image));
        let _ = std::fs::remove_file(BuildLock::path(&image));
    }

    #[test]
    fn the_recipe_lists_what_analysts_use_and_its_hash_is_stable() {
        let packages = packages();
        for wanted in [
            "python3-pandas",
            "python3-matplotlib",
            "python3-scipy",
            "python3-openpyxl",
            "sqlite3",
            "jq",
            "csvkit",
            "git",
            "nodejs",
            "fonts-wqy-microhei",
        ] {
            assert!(packages.contains(&wanted), "{wanted} missing: {packages:?}");
        }
        assert!(
            packages
                .iter()
                .all(|p| !p.contains(' ') && !p.contains('#'))
        );
        assert_eq!(recipe_hash(), recipe_hash());
        assert_eq!(recipe_hash().len(), 16);
    }
}
