//! A remote Docker engine for tests and benches, without a second machine: certificates made by
//! `openssl` (a team's CA, engine and client certificates) and a TLS front before the local
//! engine's socket (`socat`) that demands a client certificate signed by the team's CA. Both
//! tools come from Debian's packages (`ensure_docker` in scripts/lib.sh installs them); a
//! missing one panics, naming how to get it, so a test that needs them fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `openssl` with `args` in `dir`, or panics with what it said.
pub fn openssl(dir: &Path, args: &[&str]) {
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
pub fn make_ca(dir: &Path, name: &str) {
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
pub fn make_cert(dir: &Path, ca: &str, out: &str, cn: &str, ext: &str) {
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
pub fn cert_dir(dir: &Path, name: &str, ca: &str, client: Option<&str>) -> PathBuf {
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
pub struct Front {
    child: Child,
    /// The loopback port it listens on.
    pub port: u16,
}

impl Front {
    /// Starts a front with the certificate `server` (`SERVER.pem`, `SERVER-key.pem`) in `dir`.
    pub fn start(dir: &Path, server: &str) -> Self {
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

/// The team's CA, an engine certificate for `localhost`/`127.0.0.1`, and a client folder
/// (`DIR/good`) with the CA and a client certificate it signed.
pub fn team(dir: &Path) -> PathBuf {
    make_ca(dir, "team");
    make_cert(
        dir,
        "team",
        "server",
        "localhost",
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    );
    make_cert(
        dir,
        "team",
        "analyst",
        "analyst",
        "extendedKeyUsage=clientAuth\n",
    );
    cert_dir(dir, "good", "team", Some("analyst"))
}
