//! Where the Docker engine is, as the docker CLI reads it: `DOCKER_HOST` (a `unix://` socket, a
//! Windows `npipe://` named pipe, `tcp://host:port` with mutual TLS, or
//! `ssh://[user@]host[:port]`), `DOCKER_TLS_VERIFY` and `DOCKER_CERT_PATH` (a folder holding
//! `ca.pem`, `cert.pem` and `key.pem`). A remote engine is reached only over a channel that
//! checks both sides: mutual TLS, or SSH with the user's own keys and known hosts; a plain
//! `tcp://` engine would run anyone's containers, so it is refused. Unset, `DOCKER_HOST` means
//! this computer's engine, found as its platform has it (see [`HostOs`]); an address the
//! platform cannot reach (a named pipe off Windows, a unix socket on it) is refused in a sentence
//! that names what to use instead.

use std::path::{Path, PathBuf};

pub use super::platform::HostOs;
use crate::error::SandboxError;

/// The socket used when `DOCKER_HOST` is not set, on Linux (and tried first on macOS); also the
/// engine's socket on the far side of an `ssh://` address.
pub const DEFAULT_SOCKET: &str = "/var/run/docker.sock";

/// Docker Desktop's named pipe on Windows, the engine an unset `DOCKER_HOST` means there, as
/// the docker CLI writes it after `npipe://`.
pub const DEFAULT_PIPE: &str = "//./pipe/docker_engine";

/// The files a TLS connection reads from the certificate folder.
pub const TLS_FILES: [&str; 3] = ["ca.pem", "cert.pem", "key.pem"];

/// An engine's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineAddress {
    /// A local engine's unix socket.
    Socket(PathBuf),
    /// A local engine's named pipe on Windows, `//./pipe/NAME` (Docker Desktop's is
    /// [`DEFAULT_PIPE`]).
    NamedPipe(String),
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

    /// This computer's engine, as its platform has it: the socket at [`DEFAULT_SOCKET`] on
    /// Linux, Docker Desktop's pipe on Windows, and on macOS the first of the desktop engines'
    /// sockets that exists (an error lists them all when none does).
    pub fn local() -> Result<Self, SandboxError> {
        let home = super::platform::home_dir();
        HostOs::CURRENT
            .local_engine(home.as_deref(), Path::exists)
            .map_err(|detail| SandboxError::DockerUnavailable { detail })
    }

    /// True for an engine on this computer (a socket or a pipe), which can bind its folders.
    pub fn is_local(&self) -> bool {
        matches!(self, Self::Socket(_) | Self::NamedPipe(_))
    }

    /// The address from the variables' values; `home_docker` is `~/.docker`, where the docker
    /// CLI looks for certificates when `DOCKER_CERT_PATH` is unset. No host means this
    /// computer's engine ([`EngineAddress::local`]); a host this platform cannot reach is
    /// refused.
    pub fn parse(
        host: Option<&str>,
        tls_verify: Option<&str>,
        cert_path: Option<PathBuf>,
        home_docker: Option<PathBuf>,
    ) -> Result<Self, SandboxError> {
        let Some(host) = host else {
            return Self::local();
        };
        let address = Self::parse_host(host, tls_verify, cert_path, home_docker)?;
        match HostOs::CURRENT.refusal(&address) {
            Some(why) => Err(SandboxError::EngineRefused {
                detail: format!("DOCKER_HOST={host}: {why}"),
            }),
            None => Ok(address),
        }
    }

    /// `DOCKER_HOST`'s value as an address, as every platform writes it.
    fn parse_host(
        host: &str,
        tls_verify: Option<&str>,
        cert_path: Option<PathBuf>,
        home_docker: Option<PathBuf>,
    ) -> Result<Self, SandboxError> {
        let unavailable = |detail: String| SandboxError::EngineRefused { detail };
        if let Some(socket) = host.strip_prefix("unix://") {
            return Ok(Self::Socket(PathBuf::from(socket)));
        }
        if let Some(pipe) = host.strip_prefix("npipe://") {
            return pipe_address(host, pipe);
        }
        if let Some(rest) = host.strip_prefix("ssh://") {
            return ssh_address(host, rest);
        }
        let Some(addr) = host.strip_prefix("tcp://") else {
            return Err(unavailable(format!(
                "DOCKER_HOST={host} is neither a unix:// socket, an npipe:// pipe, a tcp:// \
                 engine with TLS nor an ssh:// host"
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
            Self::NamedPipe(pipe) => format!("npipe://{pipe}"),
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

/// `npipe://` and a pipe's path, `//HOST/pipe/NAME` (backslashes taken as slashes, as Windows
/// does), or nothing for Docker Desktop's, as the docker CLI reads it.
fn pipe_address(host: &str, pipe: &str) -> Result<EngineAddress, SandboxError> {
    if pipe.is_empty() {
        return Ok(EngineAddress::NamedPipe(DEFAULT_PIPE.to_owned()));
    }
    let path = pipe.replace('\\', "/");
    let named = path
        .strip_prefix("//")
        .and_then(|rest| rest.split_once("/pipe/"))
        .is_some_and(|(server, name)| {
            !server.is_empty() && !server.contains('/') && !name.is_empty()
        });
    if named {
        Ok(EngineAddress::NamedPipe(path))
    } else {
        Err(SandboxError::EngineRefused {
            detail: format!(
                "DOCKER_HOST={host} names no pipe: write npipe:////./pipe/NAME (Docker \
                 Desktop's is npipe:////./pipe/docker_engine)"
            ),
        })
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

/// `~/.docker` (`%USERPROFILE%\.docker` on Windows), where the docker CLI keeps its
/// certificates by default.
fn home_docker_dir() -> Option<PathBuf> {
    super::platform::home_dir().map(|home| home.join(".docker"))
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
        // Unset: this computer's engine, as its platform has it (see `platform`'s tests).
        assert_eq!(
            EngineAddress::parse(None, None, None, home.clone()).ok(),
            EngineAddress::local().ok()
        );
        assert_eq!(
            EngineAddress::parse_host("unix:///run/user/1000/docker.sock", None, None, None)
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
                .contains("neither a unix:// socket, an npipe:// pipe")
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
    fn pipes_are_written_as_the_docker_cli_writes_them() {
        let pipe = |host: &str| EngineAddress::parse_host(host, None, None, None);
        let desktop = EngineAddress::NamedPipe(DEFAULT_PIPE.to_owned());
        assert_eq!(pipe("npipe:////./pipe/docker_engine").unwrap(), desktop);
        assert_eq!(pipe("npipe://").unwrap(), desktop, "the CLI's default");
        assert_eq!(pipe(r"npipe://\\.\pipe\docker_engine").unwrap(), desktop);
        assert_eq!(
            pipe("npipe:////./pipe/dockerDesktopLinuxEngine")
                .unwrap()
                .describe(),
            "npipe:////./pipe/dockerDesktopLinuxEngine"
        );
        for bad in [
            "npipe:///pipe/docker_engine",
            "npipe:////./pipe/",
            "npipe://docker_engine",
        ] {
            let refused = pipe(bad).unwrap_err().to_string();
            assert!(refused.contains("names no pipe"), "{bad}: {refused}");
        }
    }

    #[test]
    fn an_address_this_platform_cannot_reach_is_refused_when_read() {
        let parse = |host: &str| EngineAddress::parse(Some(host), None, None, None);
        let pipe = parse("npipe:////./pipe/docker_engine");
        let socket = parse("unix:///var/run/docker.sock");
        let ssh = parse("ssh://ana@engine.lab");
        if cfg!(windows) {
            assert!(pipe.is_ok());
            for refused in [socket, ssh] {
                let said = refused.unwrap_err().to_string();
                assert!(said.contains("a tcp:// engine with TLS"), "{said}");
            }
        } else {
            assert!(socket.is_ok() && ssh.is_ok());
            let said = pipe.unwrap_err().to_string();
            assert!(
                said.contains("DOCKER_HOST=npipe:////./pipe/docker_engine: a named pipe"),
                "{said}"
            );
        }
        assert!(EngineAddress::NamedPipe(DEFAULT_PIPE.to_owned()).is_local());
        assert!(EngineAddress::Socket(PathBuf::from(DEFAULT_SOCKET)).is_local());
        assert!(
            !EngineAddress::Tls {
                addr: "engine.lab:2376".into(),
                certs: PathBuf::new()
            }
            .is_local()
        );
    }

    #[test]
    fn ssh_addresses_take_a_user_and_a_port_and_nothing_ssh_would_read_as_an_option() {
        let ssh = |host: &str| EngineAddress::parse_host(host, None, None, None);
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
