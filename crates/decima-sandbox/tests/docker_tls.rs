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

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{TEST_IMAGE, unique_key};
use decima_sandbox::docker::address::EngineAddress;
use decima_sandbox::docker::{DockerConfig, DockerEngine, DockerSandbox};
use decima_sandbox::host::{Sandbox, ShellRequest};

/// Runs `openssl` with `args` in `dir`, or panics with what it said.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl is needed to make the test's certificates (scripts/lib.sh installs it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA (`NAME-ca.pem`, `NAME-ca-key.pem`) in `dir`.
fn make_ca(dir: &Path, name: &str) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &format!("/CN=decima test {name} CA"),
            "-keyout",
            &format!("{name}-ca-key.pem"),
            "-out",
            &format!("{name}-ca.pem"),
        ],
    );
}

/// A certificate `OUT.pem` with key `OUT-key.pem` signed by CA `ca`, with extensions `ext`.
fn make_cert(dir: &Path, ca: &str, out: &str, cn: &str, ext: &str) {
    let ext_file = format!("{out}.ext");
    std::fs::write(dir.join(&ext_file), ext).unwrap();
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-subj",
            &format!("/CN={cn}"),
            "-keyout",
            &format!("{out}-key.pem"),
            "-out",
            &format!("{out}.csr"),
        ],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &format!("{out}.csr"),
            "-CA",
            &format!("{ca}-ca.pem"),
            "-CAkey",
            &format!("{ca}-ca-key.pem"),
            "-CAcreateserial",
            "-days",
            "2",
            "-out",
            &format!("{out}.pem"),
            "-extfile",
            &ext_file,
        ],
    );
}

/// A folder as `DOCKER_CERT_PATH` holds one: `ca.pem`, `cert.pem`, `key.pem`.
fn cert_dir(dir: &Path, name: &str, ca: &str, client: Option<&str>) -> PathBuf {
    let out = dir.join(name);
    std::fs::create_dir(&out).unwrap();
    std::fs::copy(dir.join(format!("{ca}-ca.pem")), out.join("ca.pem")).unwrap();
    if let Some(client) = client {
        std::fs::copy(dir.join(format!("{client}.pem")), out.join("cert.pem")).unwrap();
        std::fs::copy(dir.join(format!("{client}-key.pem")), out.join("key.pem")).unwrap();
    }
    out
}

/// A TLS front to the local engine's socket that demands a client certificate signed by the
/// team's CA, on a free loopback port; killed when dropped.
struct Front {
    child: Child,
    port: u16,
}

impl Front {
    fn start(dir: &Path, server: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let listen = format!(
            "OPENSSL-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,cert={server}.pem,key={server}-key.pem,cafile=team-ca.pem,verify=1"
        );
        // socat verifies clients but sets no session id context, so OpenSSL refuses a client
        // resuming a session ("session id context uninitialized"), which rustls does on its
        // second connection: the front sends no resumption tickets. (dockerd's own TLS resumes
        // fine; this is the front's limit, not the client's.)
        std::fs::write(
            dir.join("front-openssl.cnf"),
            "openssl_conf = conf\n[conf]\nssl_conf = ssl\n[ssl]\nsystem_default = tls\n\
             [tls]\nNumTickets = 0\n",
        )
        .unwrap();
        let child = Command::new("socat")
            .args([listen.as_str(), "UNIX-CONNECT:/var/run/docker.sock"])
            .env("OPENSSL_CONF", dir.join("front-openssl.cnf"))
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("socat is needed for the TLS front (scripts/lib.sh installs it)");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "socat never listened"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, port }
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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
    make_ca(d, "team");
    make_ca(d, "other");
    make_cert(
        d,
        "team",
        "server",
        "localhost",
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    );
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
    let good = cert_dir(d, "good", "team", Some("analyst"));
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
