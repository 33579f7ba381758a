//! A remote Docker engine over mutual TLS, as a team runs one: the local engine behind a TLS
//! front that verifies clients (`socat` from Debian's packages), with certificates made here by
//! `openssl`. A sandbox runs a command through it; a wrong CA, a missing client certificate, a
//! client certificate the engine does not trust and a host name its certificate does not hold
//! are each refused with an error that names TLS and what to check, and none falls back to the
//! local engine.
//!
//! Needs a running engine, the busybox test image, `openssl` and `socat` (scripts/test.sh
//! installs and starts them); without them it fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;

use common::{TEST_IMAGE, unique_key};
use decima_sandbox::docker::address::EngineAddress;
use decima_sandbox::docker::{DockerConfig, DockerEngine, DockerSandbox};
use decima_sandbox::host::{Sandbox, ShellRequest};
use decima_testkit::tls::{Front, cert_dir, make_ca, make_cert, team};

/// The error connecting to `addr` with the certificates of `certs`.
async fn refused(addr: &str, certs: &Path) -> String {
    let address = EngineAddress::Tls {
        addr: addr.to_owned(),
        certs: certs.to_path_buf(),
    };
    match DockerEngine::connect_to(&address, "decimatls").await {
        Ok(_) => panic!("{addr} with {} was not refused", certs.display()),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn a_sandbox_runs_on_an_engine_behind_mutual_tls_and_bad_certificates_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = team(d);
    make_ca(d, "other");
    make_cert(
        d,
        "team",
        "elsewhere",
        "elsewhere.example",
        "subjectAltName=DNS:elsewhere.example\nextendedKeyUsage=serverAuth\n",
    );
    make_cert(
        d,
        "team",
        "analyst",
        "analyst",
        "extendedKeyUsage=clientAuth\n",
    );
    make_cert(
        d,
        "other",
        "stranger",
        "stranger",
        "extendedKeyUsage=clientAuth\n",
    );
    let front = Front::start(d, "server");
    let addr = format!("127.0.0.1:{}", front.port);

    // Through the front: a container runs a command, as on the local socket.
    let engine = DockerEngine::connect_to(
        &EngineAddress::Tls {
            addr: addr.clone(),
            certs: good.clone(),
        },
        "decimatls",
    )
    .await
    .unwrap();
    let sandbox = DockerSandbox::new(
        engine,
        DockerConfig::with_image(TEST_IMAGE),
        &unique_key("tls"),
    )
    .unwrap();
    let ran = sandbox
        .exec(ShellRequest::new("echo over tls && id -u"))
        .await
        .unwrap();
    assert_eq!(ran.exit_code, Some(0), "{}", ran.output);
    assert_eq!(ran.output, "over tls\n1000\n");
    sandbox.remove(true).await.unwrap();

    // The engine's certificate is not signed by the CA the client holds.
    let wrong_ca = cert_dir(d, "wrong-ca", "other", Some("analyst"));
    let e = refused(&addr, &wrong_ca).await;
    assert!(e.contains("TLS") && e.contains("wrong-ca/ca.pem"), "{e}");
    assert!(e.contains("not signed by"), "{e}");

    // No client certificate in the folder: said before anything is sent.
    let no_cert = cert_dir(d, "no-cert", "team", None);
    let e = refused(&addr, &no_cert).await;
    assert!(e.contains("TLS") && e.contains("no-cert/cert.pem"), "{e}");

    // A client certificate the engine does not trust.
    let stranger = cert_dir(d, "stranger-dir", "team", Some("stranger"));
    let e = refused(&addr, &stranger).await;
    assert!(
        e.contains("TLS") && e.contains("stranger-dir/cert.pem"),
        "{e}"
    );

    // The engine's certificate is for another host name.
    let elsewhere = Front::start(d, "elsewhere");
    let e = refused(&format!("127.0.0.1:{}", elsewhere.port), &good).await;
    assert!(
        e.contains("TLS") && e.contains("not for the host name 127.0.0.1"),
        "{e}"
    );
    drop(front);

    // An engine that is gone is an error, never the local engine instead.
    let e = refused(&addr, &good).await;
    assert!(e.contains(&addr), "{e}");
}
