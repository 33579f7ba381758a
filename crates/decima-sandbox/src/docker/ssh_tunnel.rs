//! A remote engine reached over SSH: the platform's own `ssh` client forwards a socket in a
//! private folder here to the engine's socket there (`ssh -N -L LOCAL:REMOTE`), and the engine
//! is then spoken to as a local one. `ssh` reads the user's keys, agent, known hosts and
//! `~/.ssh/config` (or the file `DECIMA_SSH_CONFIG` names) exactly as for a login, and never
//! asks anything (`BatchMode`): an unknown host key, a refused key or a host that does not
//! answer each fail with `ssh`'s own words. The tunnel lives as long as the engine's
//! connection.
//!
//! Unix only: OpenSSH for Windows cannot listen on a local unix socket, and a forwarded TCP
//! port would let every user of the computer reach the engine, so Windows refuses `ssh://`
//! engines before a tunnel is tried (see `platform`).
//!
//! One `ssh` process per connected engine, rather than one per HTTP connection as `docker -H
//! ssh://` does with `docker system dial-stdio`: the engine host needs no docker CLI, and a
//! call costs no new SSH session.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

use super::address::DEFAULT_SOCKET;
use super::platform::create_private_dir;
use crate::error::SandboxError;

/// How long `ssh` may take to log in and open the forwarded socket.
const OPEN_TIMEOUT: Duration = Duration::from_secs(20);

/// A running `ssh -L`, killed on drop; its socket's folder is removed with it.
#[derive(Debug)]
pub(crate) struct SshTunnel {
    child: Child,
    socket: PathBuf,
    dir: PathBuf,
}

impl SshTunnel {
    /// Starts `ssh` to `destination` and waits until the forwarded socket exists.
    pub(crate) async fn open(
        destination: &str,
        port: Option<u16>,
        config: Option<&Path>,
        shown: &str,
    ) -> Result<Self, SandboxError> {
        let refused = |why: String| SandboxError::EngineRefused {
            detail: format!("ssh to {shown}: {why}"),
        };
        let dir = std::env::temp_dir().join(format!(
            "decima-ssh-{}-{}",
            std::process::id(),
            uuid::Uuid::now_v7().simple()
        ));
        create_private_dir(&dir).map_err(|e| {
            refused(format!(
                "cannot make a private folder {}: {e}",
                dir.display()
            ))
        })?;
        let socket = dir.join("docker.sock");
        let mut command = Command::new("ssh");
        command
            .args([
                "-N",
                "-T",
                "-o",
                "BatchMode=yes",
                "-o",
                "ExitOnForwardFailure=yes",
            ])
            .args(["-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=15"])
            .arg("-L")
            .arg(format!("{}:{DEFAULT_SOCKET}", socket.display()));
        if let Some(port) = port {
            command.arg("-p").arg(port.to_string());
        }
        if let Some(config) = config {
            command.arg("-F").arg(config);
        }
        command
            .arg("--")
            .arg(destination)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(refused(if e.kind() == std::io::ErrorKind::NotFound {
                    "no ssh client here: install OpenSSH's client (the `ssh` command), or \
                     reach the engine over tcp:// with TLS"
                        .to_owned()
                } else {
                    format!("cannot start ssh: {e}")
                }));
            }
        };
        let started = Instant::now();
        loop {
            if socket.exists() {
                return Ok(Self { child, socket, dir });
            }
            if let Ok(Some(status)) = child.try_wait() {
                let mut said = String::new();
                if let Some(mut err) = child.stderr.take() {
                    let _ = err.read_to_string(&mut said).await;
                }
                let _ = std::fs::remove_dir_all(&dir);
                let said = said
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect::<Vec<_>>()
                    .join("; ");
                return Err(refused(format!(
                    "{} (ssh exited with {status}); check the user, the key ssh offers and \
                     the host key in known_hosts",
                    if said.is_empty() {
                        "no reason given"
                    } else {
                        &said
                    }
                )));
            }
            if started.elapsed() > OPEN_TIMEOUT {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(refused(format!(
                    "the engine's socket was not forwarded within {} s",
                    OPEN_TIMEOUT.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The forwarded socket, which speaks to the remote engine.
    pub(crate) fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for SshTunnel {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
