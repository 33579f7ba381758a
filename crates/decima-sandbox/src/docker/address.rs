//! Where the Docker engine is, as the docker CLI reads it: `DOCKER_HOST` (a `unix://` socket,
//! `tcp://host:port` with mutual TLS, or `ssh://[user@]host[:port]`), `DOCKER_TLS_VERIFY` and
//! `DOCKER_CERT_PATH` (a folder holding `ca.pem`, `cert.pem` and `key.pem`). A remote engine is
//! reached only over a channel that checks both sides: mutual TLS, or SSH with the user's own
//! keys and known hosts; a plain `tcp://` engine would run anyone's containers, so it is
//! refused.

use std::path::{Path, PathBuf};

use crate::error::SandboxError;

/// The socket used when `DOCKER_HOST` is not set.
pub const DEFAULT_SOCKET: &str = "/var/run/docker.sock";

/// The files a TLS connection reads from the certificate folder.
pub const TLS_FILES: [&str; 3] = ["ca.pem", "cert.pem", "key.pem"];

/// An engine's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineAddress {
    /// A local engine's unix socket.
    Socket(PathBuf),
    /// A remote engine over mutual TLS.
    Tls {
        /// `host:port`.
        addr: String,
        /// The folder of `ca.pem`, `cert.pem` and `key.pem`.
        certs: PathBuf,
    },
    /// A remote engine's socket reached through the platform's `ssh` client.
    Ssh {
        /// `[user@]host`, as `ssh` takes it.
        destination: String,
        /// The port, when not ssh's default (or the configuration's).
        port: Option<u16>,
        /// An `ssh -F` configuration file (`DECIMA_SSH_CONFIG`), else the user's own.
        config: Option<PathBuf>,
    },
}

impl EngineAddress {
    /// The address the environment names, as the docker CLI reads it.
    pub fn from_env() -> Result<Self, SandboxError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Self::parse(
            var("DOCKER_HOST").as_deref(),
            var("DOCKER_TLS_VERIFY").as_deref(),
            var("DOCKER_CERT_PATH").map(PathBuf::from),
            home_docker_dir(),
        )
    }

    /// The address from the variables' values; `home_docker` is `~/.docker`, where the docker
    /// CLI looks for certificates when `DOCKER_CERT_PATH` is unset.
    pub fn parse(
        host: Option<&str>,
        tls_verify: Option<&str>,
        cert_path: Option<PathBuf>,
        home_docker: Option<PathBuf>,
    ) -> Result<Self, SandboxError> {
        let unavailable = |detail: String| SandboxError::EngineRefused { detail };
        let Some(host) = host else {
            return Ok(Self::Socket(PathBuf::from(DEFAULT_SOCKET)));
        };
        if let Some(socket) = host.strip_prefix("unix://") {
            return Ok(Self::Socket(PathBuf::from(socket)));
        }
        if let Some(rest) = host.strip_prefix("ssh://") {
            return ssh_address(host, rest);
        }
        let Some(addr) = host.strip_prefix("tcp://") else {
            return Err(unavailable(format!(
                "DOCKER_HOST={host} is neither a unix:// socket, a tcp:// engine with TLS nor an \
                 ssh:// host"
            )));
        };
        let addr = addr.trim_end_matches('/');
        if addr.is_empty() || !addr.contains(':') {
            return Err(unavailable(format!(
                "DOCKER_HOST={host} names no port: write tcp://HOST:2376"
            )));
        }
        let verify = tls_verify.is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"));
        if !verify {
            return Err(unavailable(format!(
                "DOCKER_HOST={host} is a remote engine without DOCKER_TLS_VERIFY=1: Decima \
                 reaches a remote engine only over TLS that checks both sides; set \
                 DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH to the folder of ca.pem, cert.pem and \
                 key.pem"
            )));
        }
        let certs = cert_path.or(home_docker).ok_or_else(|| {
            unavailable(
                "DOCKER_TLS_VERIFY is set but neither DOCKER_CERT_PATH nor a home folder names \
                 where ca.pem, cert.pem and key.pem are"
                    .to_owned(),
            )
        })?;
        Ok(Self::Tls {
            addr: addr.to_owned(),
            certs,
        })
    }

    /// How a message names it.
    pub fn describe(&self) -> String {
        match self {
            Self::Socket(path) => path.display().to_string(),
            Self::Tls { addr, .. } => format!("tcp://{addr}"),
            Self::Ssh {
                destination, port, ..
            } => match port {
                Some(port) => format!("ssh://{destination}:{port}"),
                None => format!("ssh://{destination}"),
            },
        }
    }
}

/// `ssh://[user@]host[:port]`, checked so that nothing in it can reach `ssh` as an option.
fn ssh_address(host: &str, rest: &str) -> Result<EngineAddress, SandboxError> {
    let refused = |why: &str| SandboxError::EngineRefused {
        detail: format!("DOCKER_HOST={host}: {why}; write ssh://user@host or ssh://user@host:22"),
    };
    let rest = rest.trim_end_matches('/');
    if rest.contains('/') || rest.contains('?') {
        return Err(refused(
            "Decima reaches the engine's default socket, so give no path",
        ));
    }
    let (user, at) = match rest.rsplit_once('@') {
        Some((user, at)) => (Some(user), at),
        None => (None, rest),
    };
    let (name, port) = match at.rsplit_once(':') {
        Some((name, port)) => match port.parse::<u16>() {
            Ok(port) if port > 0 => (name, Some(port)),
            _ => return Err(refused("the port is not a number from 1 to 65535")),
        },
        None => (at, None),
    };
    let plain = |part: &str| {
        !part.is_empty()
            && !part.starts_with('-')
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    };
    if !plain(name) || user.is_some_and(|u| !plain(u)) {
        return Err(refused(
            "a user and a host name are letters, digits, dots, dashes and underscores",
        ));
    }
    let config = std::env::var_os("DECIMA_SSH_CONFIG")
        .filter(|c| !c.is_empty())
        .map(PathBuf::from);
    Ok(EngineAddress::Ssh {
        destination: match user {
            Some(user) => format!("{user}@{name}"),
            None => name.to_owned(),
        },
        port,
        config,
    })
}

/// `~/.docker`, where the docker CLI keeps its certificates by default.
fn home_docker_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".docker"))
}

/// The host part of `host:port` (an IPv6 address keeps its brackets off).
pub(crate) fn host_of(addr: &str) -> &str {
    let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
    host.trim_start_matches('[').trim_end_matches(']')
}

/// Checks the certificate folder holds the three files, naming the first one missing.
pub fn check_cert_files(certs: &Path) -> Result<(), SandboxError> {
    for file in TLS_FILES {
        let path = certs.join(file);
        if !path.is_file() {
            let what = match file {
                "ca.pem" => "the CA certificate that signed the engine's",
                "cert.pem" => "this client's certificate",
                _ => "this client's private key",
            };
            return Err(SandboxError::EngineRefused {
                detail: format!(
                    "TLS: no {} at {} (DOCKER_CERT_PATH): the engine's TLS needs ca.pem, \
                     cert.pem and key.pem there, as the docker CLI does",
                    what,
                    path.display()
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_follow_the_docker_cli_and_refuse_a_remote_engine_without_tls() {
        let home = Some(PathBuf::from("/home/a/.docker"));
        assert_eq!(
            EngineAddress::parse(None, None, None, home.clone()).unwrap(),
            EngineAddress::Socket(PathBuf::from(DEFAULT_SOCKET))
        );
        assert_eq!(
            EngineAddress::parse(Some("unix:///run/user/1000/docker.sock"), None, None, None)
                .unwrap(),
            EngineAddress::Socket(PathBuf::from("/run/user/1000/docker.sock"))
        );
        assert_eq!(
            EngineAddress::parse(
                Some("tcp://engine.lab:2376"),
                Some("1"),
                Some(PathBuf::from("/etc/decima/certs")),
                home.clone()
            )
            .unwrap(),
            EngineAddress::Tls {
                addr: "engine.lab:2376".into(),
                certs: PathBuf::from("/etc/decima/certs")
            }
        );
        // The CLI's default folder when DOCKER_CERT_PATH is unset.
        assert_eq!(
            EngineAddress::parse(Some("tcp://10.0.0.5:2376"), Some("1"), None, home.clone())
                .unwrap(),
            EngineAddress::Tls {
                addr: "10.0.0.5:2376".into(),
                certs: PathBuf::from("/home/a/.docker")
            }
        );
        let plain = EngineAddress::parse(Some("tcp://engine.lab:2375"), None, None, home.clone())
            .unwrap_err()
            .to_string();
        assert!(plain.contains("DOCKER_TLS_VERIFY=1"), "{plain}");
        let off =
            EngineAddress::parse(Some("tcp://engine.lab:2376"), Some("0"), None, home.clone())
                .unwrap_err()
                .to_string();
        assert!(off.contains("only over TLS"), "{off}");
        assert!(
            EngineAddress::parse(Some("http://engine.lab"), None, None, None)
                .unwrap_err()
                .to_string()
                .contains("neither a unix:// socket")
        );
        assert!(
            EngineAddress::parse(Some("tcp://engine.lab"), Some("1"), None, home)
                .unwrap_err()
                .to_string()
                .contains("names no port")
        );
        assert_eq!(host_of("engine.lab:2376"), "engine.lab");
        assert_eq!(host_of("[::1]:2376"), "::1");
    }

    #[test]
    fn ssh_addresses_take_a_user_and_a_port_and_nothing_ssh_would_read_as_an_option() {
        let ssh = |host: &str| EngineAddress::parse(Some(host), None, None, None);
        match ssh("ssh://ana@engine.lab:2222").unwrap() {
            EngineAddress::Ssh {
                destination, port, ..
            } => {
                assert_eq!(destination, "ana@engine.lab");
                assert_eq!(port, Some(2222));
            }
            other => panic!("{other:?}"),
        }
        let plain = ssh("ssh://engine.lab/").unwrap();
        assert_eq!(plain.describe(), "ssh://engine.lab");
        for hostile in [
            "ssh://-oProxyCommand=touch%20x@engine",
            "ssh://ana@-oProxyCommand=x",
            "ssh://ana@engine lab",
            "ssh://ana@engine.lab:0",
            "ssh://ana@engine.lab:ssh",
            "ssh://ana@engine.lab/var/run/docker.sock",
            "ssh://",
        ] {
            let refused = ssh(hostile).unwrap_err().to_string();
            assert!(
                refused.contains("write ssh://user@host"),
                "{hostile}: {refused}"
            );
        }
    }
}
