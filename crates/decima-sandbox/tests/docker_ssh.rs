//! A remote Docker engine over SSH, as a team reaches an engine host it can log in to: the
//! local engine behind OpenSSH's own `sshd` (from Debian's packages), keys made here by
//! `ssh-keygen`, reached through the platform's `ssh` client. A sandbox runs a command through
//! it; a host key `ssh` does not know, a key the server refuses, a user who may not use the
//! engine's socket and a server that does not answer are each refused with the reason (`ssh`'s
//! own words where it is `ssh`'s), and none falls back to the local engine.
//!
//! Needs a running engine, the busybox test image and OpenSSH's client and server
//! (scripts/test.sh installs and starts them); without them it fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;

use common::{TEST_IMAGE, unique_key};
use decima_sandbox::docker::address::EngineAddress;
use decima_sandbox::docker::{DockerConfig, DockerEngine, DockerSandbox};
use decima_sandbox::host::{Sandbox, ShellRequest};
use decima_testkit::ssh::{Server, login_name};

fn address(user: &str, port: u16, config: &Path) -> EngineAddress {
    EngineAddress::Ssh {
        destination: format!("{user}@127.0.0.1"),
        port: Some(port),
        config: Some(config.to_path_buf()),
    }
}

async fn refused(address: &EngineAddress) -> String {
    match DockerEngine::connect_to(address, "decimassh").await {
        Ok(_) => panic!("{} was not refused", address.describe()),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn a_sandbox_runs_on_an_engine_over_ssh_and_bad_logins_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let server = Server::start(d);
    let good = address(&login_name(), server.port, &server.client_config);

    let engine = DockerEngine::connect_to(&good, "decimassh").await.unwrap();
    let sandbox = DockerSandbox::new(
        engine,
        DockerConfig::with_image(TEST_IMAGE),
        &unique_key("ssh"),
    )
    .unwrap();
    let ran = sandbox
        .exec(ShellRequest::new("echo over ssh && id -u"))
        .await
        .unwrap();
    assert_eq!(ran.exit_code, Some(0), "{}", ran.output);
    assert_eq!(ran.output, "over ssh\n1000\n");
    sandbox.remove(true).await.unwrap();

    // A host key that is not the one known for the host.
    let other = d.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let impostor = Server::start(&other);
    std::fs::write(
        other.join("known_hosts"),
        format!(
            "[127.0.0.1]:{} {}",
            impostor.port,
            std::fs::read_to_string(d.join("host_ed25519.pub")).unwrap()
        ),
    )
    .unwrap();
    let e = refused(&address(
        &login_name(),
        impostor.port,
        &impostor.client_config,
    ))
    .await;
    assert!(
        e.contains("ssh to ssh://") && e.contains("Host key verification failed"),
        "{e}"
    );

    // A key the server does not know.
    let stranger = d.join("stranger_ed25519");
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&stranger)
        .status()
        .unwrap();
    assert!(made.success());
    let config = std::fs::read_to_string(&server.client_config)
        .unwrap()
        .replace("client_ed25519", "stranger_ed25519");
    let stranger_config = d.join("stranger_config");
    std::fs::write(&stranger_config, config).unwrap();
    let e = refused(&address(&login_name(), server.port, &stranger_config)).await;
    assert!(e.contains("Permission denied"), "{e}");

    // A user who may log in but not use the engine's socket there.
    let e = refused(&address("nobody", server.port, &server.client_config)).await;
    assert!(e.contains("may use /var/run/docker.sock"), "{e}");

    // A server that is gone: an error, never the local engine instead.
    let port = server.port;
    drop(server);
    let e = refused(&address(
        &login_name(),
        port,
        d.join("ssh_config").as_path(),
    ))
    .await;
    assert!(
        e.contains(&format!("127.0.0.1:{port}")) && e.contains("ssh to"),
        "{e}"
    );
}
