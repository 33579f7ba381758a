//! The connection to the Docker engine: connecting with a timeout, mapping engine failures to
//! [`SandboxError`]s that say what to do, naming and labelling sandboxes, and removing stale ones.

use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
use std::time::Duration;

use bollard::Docker;
use bollard::errors::Error as BollardError;
use bollard::query_parameters::{
    ListContainersOptionsBuilder, RemoveContainerOptionsBuilder, RemoveVolumeOptionsBuilder,
};
use sha2::{Digest, Sha256};

use crate::error::SandboxError;

/// Label on every container and volume the Docker sandbox creates.
pub const LABEL_SANDBOX: &str = "decima.sandbox";
/// Label carrying the conversation key.
pub const LABEL_CONVERSATION: &str = "decima.conversation";
/// Label carrying the instance id (one per data directory).
pub const LABEL_INSTANCE: &str = "decima.instance";
/// Label carrying the id of the process run that created the container.
pub const LABEL_RUN: &str = "decima.run";

pub use super::address::DEFAULT_SOCKET;
use super::address::{DEFAULT_PIPE, EngineAddress, HostOs, check_cert_files, host_of};
use super::platform;

/// The oldest engine API Decima was tested against (Docker Engine 20.10, this machine's).
const MIN_API: (u32, u32) = (1, 41);
/// The engine release that first spoke [`MIN_API`], for the message that refuses an older one.
const MIN_ENGINE: &str = "20.10";

/// How long connecting (the first ping) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one engine call (not a stream) may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A connection to the local Docker engine, scoped to one Decima instance.
///
/// Cheap to clone (the client is shared). Every call is bounded by a timeout, so a dead or
/// wedged engine gives [`SandboxError::DockerUnavailable`] instead of a hang.
#[derive(Debug, Clone)]
pub struct DockerEngine {
    docker: Docker,
    instance: String,
    run: String,
    call_timeout: Duration,
    /// The `ssh` forwarding the engine's socket, for an `ssh://` engine: it lives as long as
    /// any clone of the connection.
    _tunnel: Option<std::sync::Arc<super::ssh_tunnel::SshTunnel>>,
}

/// What an engine call ended with: the engine's own answer, or a [`SandboxError`] when it did
/// not answer in time.
pub(crate) type Answer<T> = Result<Result<T, BollardError>, SandboxError>;

impl DockerEngine {
    /// Connects to the engine the environment names (`DOCKER_HOST`, `DOCKER_TLS_VERIFY`,
    /// `DOCKER_CERT_PATH`, as the docker CLI reads them; this computer's engine when unset), and
    /// checks it. `instance` scopes the sandboxes this process manages (see
    /// [`DockerEngine::instance_for_data_dir`]). A remote engine that fails never falls back to
    /// the local one.
    pub async fn connect(instance: &str) -> Result<Self, SandboxError> {
        Self::connect_to(&EngineAddress::from_env()?, instance).await
    }

    /// Connects to the engine at `address` and checks it.
    pub async fn connect_to(address: &EngineAddress, instance: &str) -> Result<Self, SandboxError> {
        match address {
            EngineAddress::Socket(path) => Self::connect_socket(path, instance).await,
            EngineAddress::NamedPipe(pipe) => Self::connect_pipe(pipe, instance).await,
            EngineAddress::Tls { addr, certs } => Self::connect_tls(addr, certs, instance).await,
            EngineAddress::Ssh {
                destination,
                port,
                config,
            } => {
                let shown = address.describe();
                Self::connect_ssh(destination, *port, config.as_deref(), &shown, instance).await
            }
        }
    }

    /// Connects to a remote engine through `ssh` (see `ssh_tunnel`) and checks it. A host
    /// that does not answer, a key it refuses or a host key `ssh` does not know each say so in
    /// `ssh`'s words; none falls back to the local engine.
    pub async fn connect_ssh(
        destination: &str,
        port: Option<u16>,
        config: Option<&Path>,
        shown: &str,
        instance: &str,
    ) -> Result<Self, SandboxError> {
        check_name_part(instance, 32)?;
        reachable_here(&EngineAddress::Ssh {
            destination: destination.to_owned(),
            port,
            config: config.map(Path::to_path_buf),
        })?;
        let tunnel = super::ssh_tunnel::SshTunnel::open(destination, port, config, shown).await?;
        let path = tunnel
            .socket()
            .to_str()
            .ok_or_else(|| SandboxError::EngineRefused {
                detail: format!("ssh to {shown}: the forwarded socket's path is not UTF-8"),
            })?;
        let docker = platform::unix_client(path).map_err(|e| SandboxError::EngineRefused {
            detail: format!("ssh to {shown}: {e}"),
        })?;
        let said = shown.to_owned();
        let mut engine = Self::checked(docker, shown, instance, move |e| {
            SandboxError::EngineRefused {
                detail: format!(
                    "ssh to {said}: the engine behind it did not answer ({}); check that the \
                     user may use {DEFAULT_SOCKET} there",
                    error_chain(&e)
                ),
            }
        })
        .await?;
        engine._tunnel = Some(std::sync::Arc::new(tunnel));
        Ok(engine)
    }

    /// Connects to the engine at a unix socket and checks it (within 5 s).
    pub async fn connect_socket(socket: &Path, instance: &str) -> Result<Self, SandboxError> {
        check_name_part(instance, 32)?;
        reachable_here(&EngineAddress::Socket(socket.to_path_buf()))?;
        let unavailable = |detail: String| SandboxError::DockerUnavailable { detail };
        let path = socket.to_str().ok_or_else(|| {
            unavailable(format!("the socket path {} is not UTF-8", socket.display()))
        })?;
        if !socket.exists() {
            return Err(unavailable(format!("no socket at {path}")));
        }
        // bollard's own timeout only backs ours up: every call is bounded by CALL_TIMEOUT or an
        // upload-sized timeout, every stream read by its own.
        let docker =
            platform::unix_client(path).map_err(|e| unavailable(format!("{path}: {e}")))?;
        Self::checked(docker, path, instance, |e| {
            SandboxError::DockerUnavailable {
                detail: format!("{path}: {e}"),
            }
        })
        .await
    }

    /// Connects to the engine at a Windows named pipe (`//./pipe/NAME`) and checks it (within
    /// 5 s). No pipe means no engine: for Docker Desktop's, that it is installed but not
    /// running, which the error says in those words.
    pub async fn connect_pipe(pipe: &str, instance: &str) -> Result<Self, SandboxError> {
        check_name_part(instance, 32)?;
        let address = EngineAddress::NamedPipe(pipe.to_owned());
        reachable_here(&address)?;
        let shown = address.describe();
        let docker = platform::pipe_client(pipe).map_err(|e| SandboxError::DockerUnavailable {
            detail: format!("{shown}: {e}"),
        })?;
        let desktop = pipe == DEFAULT_PIPE;
        Self::checked(docker, &shown, instance, |e| {
            SandboxError::DockerUnavailable {
                detail: pipe_failure(&shown, desktop, &e),
            }
        })
        .await
    }

    /// Connects to a remote engine at `addr` (`host:port`) over mutual TLS with the files of
    /// `certs`, and checks it. A certificate the engine's is not signed by, a client
    /// certificate the engine refuses or a host name its certificate does not name each say
    /// so, naming TLS and the file to check.
    pub async fn connect_tls(
        addr: &str,
        certs: &Path,
        instance: &str,
    ) -> Result<Self, SandboxError> {
        check_name_part(instance, 32)?;
        check_cert_files(certs)?;
        let docker = Docker::connect_with_ssl(
            addr,
            &certs.join("key.pem"),
            &certs.join("cert.pem"),
            &certs.join("ca.pem"),
            3600,
            bollard::API_DEFAULT_VERSION,
        )
        .map_err(|e| SandboxError::EngineRefused {
            detail: format!(
                "TLS: cannot read the certificates in {} (DOCKER_CERT_PATH): {}",
                certs.display(),
                error_chain(&e)
            ),
        })?;
        let shown = format!("tcp://{addr}");
        let certs = certs.to_path_buf();
        let addr = addr.to_owned();
        Self::checked(docker, &shown, instance, move |e| {
            SandboxError::EngineRefused {
                detail: tls_failure(&addr, &certs, &error_chain(&e)),
            }
        })
        .await
    }

    /// Pings a new client and reads the engine's version (within 5 s each), refusing an engine
    /// older than [`MIN_API`]. `failed` words an error of the connection.
    async fn checked(
        docker: Docker,
        shown: &str,
        instance: &str,
        failed: impl Fn(BollardError) -> SandboxError,
    ) -> Result<Self, SandboxError> {
        let unavailable = |detail: String| SandboxError::DockerUnavailable { detail };
        match tokio::time::timeout(CONNECT_TIMEOUT, docker.ping()).await {
            Err(_) => {
                return Err(unavailable(format!(
                    "{shown} did not answer a ping within {} s",
                    CONNECT_TIMEOUT.as_secs()
                )));
            }
            Ok(Err(e)) => return Err(failed(e)),
            Ok(Ok(_)) => {}
        }
        let version = match tokio::time::timeout(CONNECT_TIMEOUT, docker.version()).await {
            Err(_) => {
                return Err(unavailable(format!(
                    "{shown} did not say its version within {} s",
                    CONNECT_TIMEOUT.as_secs()
                )));
            }
            Ok(Err(e)) => return Err(failed(e)),
            Ok(Ok(v)) => v,
        };
        let api = version.api_version.unwrap_or_default();
        let engine = version.version.unwrap_or_else(|| "unknown".to_owned());
        if api_version(&api).is_none_or(|v| v < MIN_API) {
            return Err(SandboxError::EngineRefused {
                detail: format!(
                    "the Docker engine at {shown} is version {engine} (API {api}); Decima was \
                     tested against Docker Engine {MIN_ENGINE} (API {}.{}) and newer: upgrade \
                     the engine",
                    MIN_API.0, MIN_API.1
                ),
            });
        }
        tracing::debug!(
            engine = shown,
            version = %engine,
            api = %api,
            instance,
            "connected to the Docker engine"
        );
        Ok(Self {
            docker,
            instance: instance.to_owned(),
            run: uuid::Uuid::now_v7().simple().to_string(),
            call_timeout: CALL_TIMEOUT,
            _tunnel: None,
        })
    }

    /// An instance id for a data directory: the first 12 hex digits of the SHA-256 of this
    /// machine's id and the directory's path. Two app instances with different data
    /// directories never touch each other's sandboxes, nor do two machines sharing a remote
    /// engine whose data directories have the same path (the same user name).
    pub fn instance_for_data_dir(data_dir: &Path) -> String {
        let mut hasher = Sha256::new();
        hasher.update(machine_id().as_bytes());
        hasher.update([0]);
        hasher.update(data_dir.as_os_str().as_encoded_bytes());
        let digest = hasher.finalize();
        digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
    }

    /// The instance id this engine handle manages sandboxes for.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// This handle's run id (a fresh UUID per connection): containers labelled with another
    /// run id are from an earlier run.
    pub fn run_id(&self) -> &str {
        &self.run
    }

    /// The raw client, for callers that need an API this crate does not wrap (and benchmarks).
    pub fn client(&self) -> &Docker {
        &self.docker
    }

    /// The container name for a conversation: `decima-<instance>-<key>`.
    pub fn container_name(&self, key: &str) -> Result<String, SandboxError> {
        check_name_part(key, 64)?;
        Ok(format!("decima-{}-{key}", self.instance))
    }

    /// The workspace volume name for a conversation: `decima-<instance>-<key>-ws`.
    pub fn volume_name(&self, key: &str) -> Result<String, SandboxError> {
        check_name_part(key, 64)?;
        Ok(format!("decima-{}-{key}-ws", self.instance))
    }

    /// The labels put on a conversation's container and volume.
    pub(crate) fn labels(&self, key: &str) -> HashMap<String, String> {
        HashMap::from([
            (LABEL_SANDBOX.to_owned(), "1".to_owned()),
            (LABEL_CONVERSATION.to_owned(), key.to_owned()),
            (LABEL_INSTANCE.to_owned(), self.instance.clone()),
            (LABEL_RUN.to_owned(), self.run.clone()),
        ])
    }

    /// Runs one engine call under the call timeout. The outer error is a timeout (the engine
    /// stopped answering); the inner one is the engine's answer, for callers that handle some
    /// statuses (404, 409) themselves.
    pub(crate) async fn answer<T>(
        &self,
        action: &str,
        call: impl Future<Output = Result<T, BollardError>>,
    ) -> Answer<T> {
        tokio::time::timeout(self.call_timeout, call)
            .await
            .map_err(|_| SandboxError::DockerUnavailable {
                detail: format!(
                    "no answer within {} s while trying to {action}",
                    self.call_timeout.as_secs()
                ),
            })
    }

    /// Runs one engine call under the call timeout, every failure mapped to a [`SandboxError`].
    pub(crate) async fn call<T>(
        &self,
        action: &str,
        call: impl Future<Output = Result<T, BollardError>>,
    ) -> Result<T, SandboxError> {
        self.answer(action, call)
            .await?
            .map_err(|e| engine_error(action, e))
    }

    /// Removes this instance's sandbox containers left by earlier runs: those labelled
    /// `decima.sandbox=1` and `decima.instance=<this instance>` whose `decima.run` label is
    /// neither this handle's run id nor a run `is_live` vouches for (another process of the
    /// same data directory still using its containers), whatever their state. Call it once at
    /// start-up, before any sandbox is used. Other instances' containers are left alone, and
    /// volumes (the workspaces) are kept: the next use of a conversation creates a fresh
    /// container on its volume. Returns the names removed.
    pub async fn remove_stale(
        &self,
        is_live: impl Fn(&str) -> bool,
    ) -> Result<Vec<String>, SandboxError> {
        let filters = HashMap::from([(
            "label",
            vec![
                format!("{LABEL_SANDBOX}=1"),
                format!("{LABEL_INSTANCE}={}", self.instance),
            ],
        )]);
        let options = ListContainersOptionsBuilder::new()
            .all(true)
            .filters(&filters)
            .build();
        let containers = self
            .call(
                "list sandbox containers",
                self.docker.list_containers(Some(options)),
            )
            .await?;
        let mut removed = Vec::new();
        for container in containers {
            let run = container
                .labels
                .as_ref()
                .and_then(|l| l.get(LABEL_RUN))
                .map(String::as_str);
            if run == Some(self.run.as_str()) || run.is_some_and(&is_live) {
                continue;
            }
            let Some(id) = container.id else { continue };
            let name = container
                .names
                .and_then(|n| n.into_iter().next())
                .map(|n| n.trim_start_matches('/').to_owned())
                .unwrap_or_else(|| id.clone());
            self.remove_container(&id).await?;
            tracing::info!(container = %name, "removed a stale sandbox container");
            removed.push(name);
        }
        Ok(removed)
    }

    /// Removes a conversation's container (running or not) and, when `remove_volume`, its
    /// workspace volume. Missing ones are fine.
    pub async fn remove_conversation(
        &self,
        key: &str,
        remove_volume: bool,
    ) -> Result<(), SandboxError> {
        let name = self.container_name(key)?;
        self.remove_container(&name).await?;
        if remove_volume {
            let volume = self.volume_name(key)?;
            let options = RemoveVolumeOptionsBuilder::new().force(true).build();
            match self
                .answer(
                    "remove the workspace volume",
                    self.docker.remove_volume(&volume, Some(options)),
                )
                .await?
            {
                Ok(()) => {}
                Err(e) if status(&e) == Some(404) => {}
                Err(e) => return Err(engine_error("remove the workspace volume", e)),
            }
        }
        Ok(())
    }

    async fn remove_container(&self, name_or_id: &str) -> Result<(), SandboxError> {
        let options = RemoveContainerOptionsBuilder::new().force(true).build();
        match self
            .answer(
                "remove the sandbox container",
                self.docker.remove_container(name_or_id, Some(options)),
            )
            .await?
        {
            Ok(()) => Ok(()),
            Err(e) if status(&e) == Some(404) => Ok(()),
            // 409: removal already in progress.
            Err(e) if status(&e) == Some(409) => Ok(()),
            Err(e) => Err(engine_error("remove the sandbox container", e)),
        }
    }
}

/// The HTTP status of an engine answer, when it was one.
pub(crate) fn status(err: &BollardError) -> Option<u16> {
    match err {
        BollardError::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

/// An engine failure as a [`SandboxError`]: an answer with an error status is `Docker`;
/// anything else (no socket, connection refused or reset, a broken stream) means the engine is
/// not reachable.
pub(crate) fn engine_error(action: &str, err: BollardError) -> SandboxError {
    match err {
        BollardError::DockerResponseServerError {
            status_code,
            message,
        } => SandboxError::Docker {
            action: action.to_owned(),
            message: format!("{message} (HTTP {status_code})"),
        },
        BollardError::JsonDataError { .. } | BollardError::JsonSerdeError { .. } => {
            SandboxError::Docker {
                action: action.to_owned(),
                message: err.to_string(),
            }
        }
        other => SandboxError::DockerUnavailable {
            detail: format!("while trying to {action}: {other}"),
        },
    }
}

/// Checks a conversation key or instance id before it goes into a container or volume name:
/// 1 to `max` ASCII letters, digits, `_`, `.` or `-`, starting with a letter or digit.
pub(crate) fn check_name_part(key: &str, max: usize) -> Result<(), SandboxError> {
    let ok = !key.is_empty()
        && key.len() <= max
        && key.as_bytes()[0].is_ascii_alphanumeric()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(SandboxError::InvalidSandboxKey {
            key: key.chars().take(80).collect(),
        })
    }
}

/// Refuses an address this platform cannot reach (see [`HostOs::refusal`]), before anything
/// is started for it.
fn reachable_here(address: &EngineAddress) -> Result<(), SandboxError> {
    match HostOs::CURRENT.refusal(address) {
        Some(why) => Err(SandboxError::EngineRefused {
            detail: format!("{}: {why}", address.describe()),
        }),
        None => Ok(()),
    }
}

/// A named pipe that did not answer, said so a person knows what to start: no pipe at all is an
/// engine that is not running (Docker Desktop, for its own pipe).
fn pipe_failure(shown: &str, desktop: bool, error: &BollardError) -> String {
    // An I/O error of bollard's own hides from the chain (it is transparent); hyper's is in it.
    let mut absent = matches!(error, BollardError::IOError { err } if err.kind() == std::io::ErrorKind::NotFound);
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            absent |= io.kind() == std::io::ErrorKind::NotFound;
        }
        cause = e.source();
    }
    match (absent, desktop) {
        (true, true) => format!("Docker Desktop is not running (nothing answers at {shown})"),
        (true, false) => format!("nothing answers at {shown}: is its engine running?"),
        _ => format!("{shown}: {}", error_chain(error)),
    }
}

/// This machine's id (systemd's `/etc/machine-id`, else D-Bus's, else the host name, which is
/// all macOS and Windows give here): what tells two desktops apart on a shared engine.
fn machine_id() -> String {
    ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| {
            gethostname::gethostname()
                .to_string_lossy()
                .trim()
                .to_owned()
        })
}

/// An error with its causes: hyper's own words ("client error (Connect)") hide what TLS said.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let said = e.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = e.source();
    }
    text
}

/// `1.41` as (1, 41).
fn api_version(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// A failed TLS connection to `addr`, said so a person knows which file or name to check.
fn tls_failure(addr: &str, certs: &Path, error: &str) -> String {
    let file = |name: &str| certs.join(name).display().to_string();
    let host = host_of(addr);
    let lower = error.to_ascii_lowercase();
    if lower.contains("tcp connect error") || lower.contains("connection refused") {
        format!(
            "nothing answered at tcp://{addr}: is the remote engine running and listening there? \
             ({error})"
        )
    } else if lower.contains("unknownissuer")
        || lower.contains("unknown issuer")
        || lower.contains("badsignature")
    {
        format!(
            "TLS: the engine at tcp://{addr} showed a certificate not signed by {} \
             (DOCKER_CERT_PATH); check that ca.pem is the CA that signed the engine's \
             certificate ({error})",
            file("ca.pem")
        )
    } else if lower.contains("notvalidforname") || lower.contains("not valid for name") {
        format!(
            "TLS: the engine's certificate at tcp://{addr} is not for the host name {host}; \
             connect with a name its certificate holds, or have it issued for {host} ({error})"
        )
    } else if lower.contains("alert") || lower.contains("certificate") {
        format!(
            "TLS: the engine at tcp://{addr} refused this client's certificate {} \
             (DOCKER_CERT_PATH); check that the engine trusts the CA that signed it ({error})",
            file("cert.pem")
        )
    } else {
        format!(
            "TLS to the engine at tcp://{addr} failed: {error}; check the engine and the files \
             in {} (ca.pem, cert.pem, key.pem)",
            certs.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_older_than_the_tested_api_is_told_apart() {
        assert!(api_version("1.41").is_some_and(|v| v >= MIN_API));
        assert!(api_version("1.47").is_some_and(|v| v >= MIN_API));
        assert!(api_version("1.40").is_some_and(|v| v < MIN_API));
        assert!(api_version("2.0").is_some_and(|v| v >= MIN_API));
        assert_eq!(api_version("latest"), None);
    }

    #[test]
    fn a_missing_pipe_is_an_engine_that_is_not_running() {
        let absent = || BollardError::IOError {
            err: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        let shown = "npipe:////./pipe/docker_engine";
        assert_eq!(
            pipe_failure(shown, true, &absent()),
            "Docker Desktop is not running (nothing answers at npipe:////./pipe/docker_engine)"
        );
        assert!(pipe_failure("npipe:////./pipe/other", false, &absent()).contains("is its engine"));
        let denied = BollardError::IOError {
            err: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        };
        assert!(pipe_failure(shown, true, &denied).starts_with(shown));
    }

    /// On Windows, a pipe nobody serves gives the words a person acts on.
    #[cfg(windows)]
    #[tokio::test]
    async fn connecting_to_a_pipe_nobody_serves_says_the_engine_is_not_running() {
        let pipe = format!("//./pipe/decima-absent-{}", uuid::Uuid::now_v7().simple());
        let said = DockerEngine::connect_pipe(&pipe, "test")
            .await
            .unwrap_err()
            .to_string();
        assert!(said.contains("nothing answers at npipe://"), "{said}");
        assert!(said.contains("start Docker Desktop"), "{said}");
    }

    /// Off Windows, a pipe is refused before anything is tried.
    #[cfg(not(windows))]
    #[tokio::test]
    async fn a_pipe_is_refused_off_windows() {
        let said = DockerEngine::connect_pipe(DEFAULT_PIPE, "test")
            .await
            .unwrap_err()
            .to_string();
        assert!(said.contains("only on Windows"), "{said}");
    }

    #[test]
    fn tls_failures_name_what_to_check() {
        let certs = Path::new("/home/a/.docker");
        let file = |name: &str| certs.join(name).display().to_string();
        let said = |e: &str| tls_failure("engine.lab:2376", certs, e);
        assert!(said("invalid peer certificate: UnknownIssuer").contains(&file("ca.pem")));
        assert!(
            said("invalid peer certificate: NotValidForName")
                .contains("not for the host name engine.lab")
        );
        assert!(said("received fatal alert: UnknownCA").contains(&file("cert.pem")));
        assert!(
            said("tcp connect error: Connection refused (os error 111)")
                .contains("nothing answered at tcp://engine.lab:2376")
        );
    }
}
