//! An SSH server in front of the local Docker engine, as a team's engine host runs one: OpenSSH's
//! own `sshd` from Debian's packages, on a loopback port, with a host key and a client key made
//! here by `ssh-keygen`. Clients reach it with the `ssh_config` written beside the keys, which
//! names the client key and pins the host key, so nothing of the machine's own `~/.ssh` is read
//! or written.

// Test support: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `sshd`, stopped on drop.
pub struct Server {
    child: Child,
    /// The loopback port it listens on.
    pub port: u16,
    /// The client configuration that reaches it (`ssh -F`): the key and the pinned host key.
    pub client_config: PathBuf,
}

/// The user the tests run as, whom the server lets in with the client key.
pub fn login_name() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn keygen(path: &Path) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .stdout(Stdio::null())
        .status()
        .expect("ssh-keygen is needed for the SSH engine test (scripts/lib.sh installs OpenSSH)");
    assert!(ok.success(), "ssh-keygen failed");
}

impl Server {
    /// Starts `sshd` with keys made in `dir`, letting the current user in with the client key.
    pub fn start(dir: &Path) -> Self {
        let host_key = dir.join("host_ed25519");
        let client_key = dir.join("client_ed25519");
        keygen(&host_key);
        keygen(&client_key);
        std::fs::copy(dir.join("client_ed25519.pub"), dir.join("authorized_keys")).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = dir.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\n\
                 PidFile {}\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
                 AllowStreamLocalForwarding yes\n",
                host_key.display(),
                dir.join("authorized_keys").display(),
                dir.join("sshd.pid").display(),
            ),
        )
        .unwrap();
        // Privilege separation needs its empty directory, which a package's service unit
        // usually makes.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("sshd.log")).unwrap())
            .spawn()
            .expect(
                "sshd is needed for the SSH engine test (scripts/lib.sh installs openssh-server)",
            );
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "sshd never listened: {}",
                std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let host_public = std::fs::read_to_string(dir.join("host_ed25519.pub")).unwrap();
        let known = dir.join("known_hosts");
        std::fs::write(&known, format!("[127.0.0.1]:{port} {host_public}")).unwrap();
        let client_config = dir.join("ssh_config");
        std::fs::write(
            &client_config,
            format!(
                "Host 127.0.0.1\n  IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile {}\n  \
                 StrictHostKeyChecking yes\n  GlobalKnownHostsFile /dev/null\n",
                client_key.display(),
                known.display()
            ),
        )
        .unwrap();
        Self {
            child,
            port,
            client_config,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
