//! What differs between the platforms in reaching a Docker engine, in one place: where this
//! computer's engine listens when `DOCKER_HOST` is unset, which kinds of address a platform can
//! reach at all, the clients for a unix socket and a named pipe, the private folder an `ssh`
//! tunnel forwards into, the user a container runs as in a folder of this computer, and what a
//! person is told to start. Everything else about an engine
//! (TLS, the API, the containers) is the same everywhere.
//!
//! The choices are functions of a [`HostOs`] value rather than of the build, so that the tests
//! check every platform's on any one of them.

use std::path::{Path, PathBuf};

use bollard::Docker;

use super::address::{DEFAULT_PIPE, DEFAULT_SOCKET, EngineAddress};

/// The seconds bollard itself allows a request: only a backstop, since every call of this crate
/// runs under its own, shorter deadline.
const CLIENT_TIMEOUT: u64 = 3600;

/// The platforms whose engines are found and reached differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostOs {
    /// Linux and the other unix systems: the engine's socket at `/var/run/docker.sock`.
    Linux,
    /// macOS, where each desktop engine (Docker Desktop, Colima, OrbStack, Rancher Desktop) has
    /// a socket of its own.
    MacOs,
    /// Windows, where Docker Desktop listens on a named pipe and unix sockets cannot be reached.
    Windows,
}

impl HostOs {
    /// The platform this build runs on.
    pub const CURRENT: Self = if cfg!(windows) {
        Self::Windows
    } else if cfg!(target_os = "macos") {
        Self::MacOs
    } else {
        Self::Linux
    };

    /// Where this computer's engine may listen, in the order tried; `home` is the user's home
    /// folder.
    pub fn local_candidates(self, home: Option<&Path>) -> Vec<EngineAddress> {
        match self {
            Self::Linux => vec![EngineAddress::Socket(PathBuf::from(DEFAULT_SOCKET))],
            Self::Windows => vec![EngineAddress::NamedPipe(DEFAULT_PIPE.to_owned())],
            Self::MacOs => {
                let mut sockets = vec![PathBuf::from(DEFAULT_SOCKET)];
                if let Some(home) = home {
                    sockets.extend(
                        [
                            ".docker/run/docker.sock",
                            ".colima/default/docker.sock",
                            ".colima/docker.sock",
                            ".orbstack/run/docker.sock",
                            ".rd/docker.sock",
                        ]
                        .map(|socket| home.join(socket)),
                    );
                }
                sockets.into_iter().map(EngineAddress::Socket).collect()
            }
        }
    }

    /// This computer's engine: where there is one place, that place (whether anything listens
    /// there is told on connecting); where there are several (macOS), the first socket that
    /// `exists`, or an error that lists every one tried.
    pub fn local_engine(
        self,
        home: Option<&Path>,
        exists: impl Fn(&Path) -> bool,
    ) -> Result<EngineAddress, String> {
        let candidates = self.local_candidates(home);
        if let [only] = candidates.as_slice() {
            return Ok(only.clone());
        }
        let found = candidates.iter().find(|address| match address {
            EngineAddress::Socket(path) => exists(path),
            _ => false,
        });
        match found {
            Some(address) => Ok(address.clone()),
            None => Err(format!(
                "no engine's socket here: tried {}",
                candidates
                    .iter()
                    .map(EngineAddress::describe)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// Why this platform cannot reach `address` at all, or `None` when it can.
    pub fn refusal(self, address: &EngineAddress) -> Option<&'static str> {
        match (self, address) {
            (Self::Linux | Self::MacOs, EngineAddress::NamedPipe(_)) => Some(
                "a named pipe (npipe://) exists only on Windows; here name a unix:// socket, a \
                 tcp:// engine with TLS or an ssh:// host",
            ),
            (Self::Windows, EngineAddress::Socket(_)) => Some(
                "Decima cannot reach a unix socket on Windows; name Docker Desktop's pipe \
                 (npipe:////./pipe/docker_engine, what an unset DOCKER_HOST means) or a tcp:// \
                 engine with TLS",
            ),
            (Self::Windows, EngineAddress::Ssh { .. }) => Some(
                "an ssh:// engine cannot be reached from Windows: OpenSSH for Windows cannot \
                 forward the engine's socket to a private local one, and a forwarded TCP port \
                 would let every user of this computer run containers; reach it as a tcp:// \
                 engine with TLS",
            ),
            _ => None,
        }
    }

    /// What a person is told to do when the engine does not answer.
    pub const fn start_hint(self) -> &'static str {
        match self {
            Self::Linux => {
                "start it (`dockerd &` or `systemctl start docker`, or scripts/run.sh), or run \
                 with --sandbox host"
            }
            Self::MacOs => {
                "start Docker Desktop, Colima (`colima start`), OrbStack or Rancher Desktop, or \
                 set DOCKER_HOST, or run with --sandbox host"
            }
            Self::Windows => {
                "start Docker Desktop, or set DOCKER_HOST to another engine, or run with \
                 --sandbox host"
            }
        }
    }
}

/// The user's home folder, under which the docker CLI keeps `.docker` and the macOS engines
/// their sockets.
pub(crate) fn home_dir() -> Option<PathBuf> {
    std::env::home_dir().filter(|home| !home.as_os_str().is_empty())
}

/// A client for the engine at the unix socket `path`, where the platform has unix sockets.
#[cfg(unix)]
pub(crate) fn unix_client(path: &str) -> Result<Docker, String> {
    Docker::connect_with_unix(path, CLIENT_TIMEOUT, bollard::API_DEFAULT_VERSION)
        .map_err(|e| e.to_string())
}

/// A client for the engine at the unix socket `path`, where the platform has unix sockets.
#[cfg(not(unix))]
pub(crate) fn unix_client(path: &str) -> Result<Docker, String> {
    let _ = path;
    Err(HostOs::Windows
        .refusal(&EngineAddress::Socket(PathBuf::new()))
        .unwrap_or("unix sockets cannot be reached here")
        .to_owned())
}

/// A client for the engine at the named pipe `path` (`//./pipe/NAME`), on Windows.
#[cfg(windows)]
pub(crate) fn pipe_client(path: &str) -> Result<Docker, String> {
    Docker::connect_with_named_pipe(path, CLIENT_TIMEOUT, bollard::API_DEFAULT_VERSION)
        .map_err(|e| e.to_string())
}

/// A client for the engine at the named pipe `path` (`//./pipe/NAME`), on Windows.
#[cfg(not(windows))]
pub(crate) fn pipe_client(path: &str) -> Result<Docker, String> {
    let _ = path;
    Err(HostOs::Linux
        .refusal(&EngineAddress::NamedPipe(String::new()))
        .unwrap_or("named pipes exist only on Windows")
        .to_owned())
}

/// The `uid:gid` of this process, for a container that writes into a folder of this computer
/// as its user.
#[cfg(unix)]
pub(crate) fn host_user() -> Option<String> {
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    Some(format!("{uid}:{gid}"))
}

/// `None` on Windows: Docker Desktop's bind mounts of its folders keep no unix owner, so the
/// container keeps its configured user.
#[cfg(not(unix))]
pub(crate) fn host_user() -> Option<String> {
    None
}

/// Creates a folder only this user can enter (0700), for the socket an `ssh` tunnel forwards:
/// that socket reaches the engine, which is root on the engine's host.
#[cfg(unix)]
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(dir)
}

/// Creates a folder only this user can enter, for the socket an `ssh` tunnel forwards: never
/// reached where `ssh://` engines are refused ([`HostOs::refusal`]), and refused here too.
#[cfg(not(unix))]
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        format!(
            "{}: no private unix socket folder on this platform",
            dir.display()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sockets(os: HostOs, home: Option<&Path>) -> Vec<PathBuf> {
        os.local_candidates(home)
            .into_iter()
            .map(|address| match address {
                EngineAddress::Socket(path) => path,
                other => PathBuf::from(other.describe()),
            })
            .collect()
    }

    /// The macOS engines' sockets under `home`, in the order they are tried.
    const MAC_SOCKETS: [&str; 5] = [
        ".docker/run/docker.sock",
        ".colima/default/docker.sock",
        ".colima/docker.sock",
        ".orbstack/run/docker.sock",
        ".rd/docker.sock",
    ];

    #[test]
    fn each_platform_looks_for_its_own_engines_in_order() {
        let home = Path::new("/Users/ana");
        assert_eq!(
            sockets(HostOs::Linux, Some(home)),
            [PathBuf::from(DEFAULT_SOCKET)]
        );
        assert_eq!(
            sockets(HostOs::Windows, Some(Path::new(r"C:\Users\ana"))),
            [PathBuf::from("npipe:////./pipe/docker_engine")]
        );
        let mut mac = vec![PathBuf::from("/var/run/docker.sock")];
        mac.extend(MAC_SOCKETS.map(|socket| home.join(socket)));
        assert_eq!(sockets(HostOs::MacOs, Some(home)), mac);
        assert_eq!(
            sockets(HostOs::MacOs, None),
            [PathBuf::from(DEFAULT_SOCKET)]
        );
    }

    #[test]
    fn macos_takes_the_first_socket_that_exists_and_says_what_it_tried() {
        let home = Path::new("/Users/ana");
        let colima = |p: &Path| p.ends_with(".colima/default/docker.sock");
        assert_eq!(
            HostOs::MacOs.local_engine(Some(home), colima).unwrap(),
            EngineAddress::Socket(home.join(".colima/default/docker.sock"))
        );
        // /var/run/docker.sock (Docker Desktop's, or a symlink to another's) comes first.
        assert_eq!(
            HostOs::MacOs.local_engine(Some(home), |_| true).unwrap(),
            EngineAddress::Socket(PathBuf::from(DEFAULT_SOCKET))
        );
        let none = HostOs::MacOs
            .local_engine(Some(home), |_| false)
            .unwrap_err();
        assert!(none.contains(DEFAULT_SOCKET), "{none}");
        for socket in MAC_SOCKETS {
            let tried = home.join(socket).display().to_string();
            assert!(none.contains(&tried), "{none}");
        }
    }

    #[test]
    fn linux_and_windows_name_their_one_place_without_looking() {
        let nothing = |_: &Path| false;
        assert_eq!(
            HostOs::Linux.local_engine(None, nothing).unwrap(),
            EngineAddress::Socket(PathBuf::from(DEFAULT_SOCKET))
        );
        assert_eq!(
            HostOs::Windows.local_engine(None, nothing).unwrap(),
            EngineAddress::NamedPipe(DEFAULT_PIPE.to_owned())
        );
    }

    #[test]
    fn each_platform_refuses_what_it_cannot_reach() {
        let socket = EngineAddress::Socket(PathBuf::from(DEFAULT_SOCKET));
        let pipe = EngineAddress::NamedPipe(DEFAULT_PIPE.to_owned());
        let ssh = EngineAddress::Ssh {
            destination: "ana@engine.lab".into(),
            port: None,
            config: None,
        };
        let tls = EngineAddress::Tls {
            addr: "engine.lab:2376".into(),
            certs: PathBuf::from("certs"),
        };
        for os in [HostOs::Linux, HostOs::MacOs] {
            assert_eq!(os.refusal(&socket), None);
            assert_eq!(os.refusal(&ssh), None);
            assert_eq!(os.refusal(&tls), None);
            assert!(
                os.refusal(&pipe)
                    .is_some_and(|why| why.contains("only on Windows"))
            );
        }
        assert_eq!(HostOs::Windows.refusal(&pipe), None);
        assert_eq!(HostOs::Windows.refusal(&tls), None);
        assert!(
            HostOs::Windows
                .refusal(&socket)
                .is_some_and(|why| why.contains("npipe:////./pipe/docker_engine"))
        );
        assert!(
            HostOs::Windows
                .refusal(&ssh)
                .is_some_and(|why| why.contains("a tcp:// engine with TLS"))
        );
    }

    #[test]
    fn the_linux_advice_is_the_one_it_always_was() {
        assert_eq!(
            HostOs::Linux.start_hint(),
            "start it (`dockerd &` or `systemctl start docker`, or scripts/run.sh), or run with \
             --sandbox host"
        );
        assert!(HostOs::Windows.start_hint().contains("Docker Desktop"));
        assert!(HostOs::MacOs.start_hint().contains("colima start"));
    }
}
