//! A real llama.cpp server for tests, started from `scripts/llamacpp/serve.py` with the Python
//! and the GGUF model that `scripts/test.sh` provides through `DECIMA_LLAMACPP_PYTHON` and
//! `DECIMA_LLAMACPP_MODEL`. What a test learns from it is what llama.cpp really answers, which no
//! test double can promise.
//!
//! ```no_run
//! # async fn demo() {
//! use decima_testkit::llamacpp::LlamaCppServer;
//! let server = LlamaCppServer::start(2048).await;
//! // point an OpenAI-compatible client at server.base_url() ...
//! # }
//! ```

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// The Python that has the xllamacpp bindings.
pub const PYTHON_VAR: &str = "DECIMA_LLAMACPP_PYTHON";
/// The GGUF model the server serves.
pub const MODEL_VAR: &str = "DECIMA_LLAMACPP_MODEL";

/// How long the server may take to load the model (two shared cores under a full test run).
const START_LIMIT: Duration = Duration::from_secs(180);

/// A running llama.cpp server on a free loopback port; dropping it kills its process group.
#[derive(Debug)]
pub struct LlamaCppServer {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

/// How to start the server beyond its context size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// The context over all slots, `-c`.
    pub n_ctx: u32,
    /// The number of slots, `--parallel`; each gets `n_ctx / parallel`.
    pub parallel: u32,
    /// `GET /slots` on, as by default; off is `--no-slots`.
    pub slots_endpoint: bool,
}

impl Options {
    /// One slot of `n_ctx` tokens, `/slots` on.
    pub fn new(n_ctx: u32) -> Options {
        Options {
            n_ctx,
            parallel: 1,
            slots_endpoint: true,
        }
    }
}

impl LlamaCppServer {
    /// Starts a server with a context of `n_ctx` tokens in one slot and waits until
    /// `GET /health` answers 200.
    ///
    /// # Panics
    /// If `DECIMA_LLAMACPP_PYTHON` or `DECIMA_LLAMACPP_MODEL` is unset (run `scripts/test.sh`,
    /// which sets them), or the server does not come up; the panic quotes its log.
    pub async fn start(n_ctx: u32) -> LlamaCppServer {
        LlamaCppServer::start_with(Options::new(n_ctx)).await
    }

    /// Like [`LlamaCppServer::start`], with more slots or `/slots` off.
    pub async fn start_with(options: Options) -> LlamaCppServer {
        let python = required_var(PYTHON_VAR, "a Python that has the xllamacpp package");
        let model = required_var(MODEL_VAR, "a GGUF model file");
        let script = serve_script();
        let mut last_log = String::new();
        // A port found free can be taken before the server binds it: try a few.
        for _ in 0..3 {
            let (mut server, port) = spawn(&python, &model, &script, options);
            match server.wait_healthy().await {
                Ok(()) => return server,
                Err(why) => {
                    last_log = format!("port {port}: {why}\n{}", server.log_tail());
                    drop(server);
                }
            }
        }
        panic!("the llama.cpp test server did not start:\n{last_log}");
    }

    /// `http://127.0.0.1:PORT/v1`, the OpenAI-compatible base URL.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// `http://127.0.0.1:PORT`, where `/props`, `/slots` and `/health` are.
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The server's process id, which is also its process group's.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until `/health` answers 200, the process dies, or the start limit passes.
    async fn wait_healthy(&mut self) -> Result<(), String> {
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("the server exited ({status})"));
            }
            if health(self.addr).await == Some(200) {
                return Ok(());
            }
            if started.elapsed() > START_LIMIT {
                return Err(format!("/health was not 200 within {START_LIMIT:?}"));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for LlamaCppServer {
    fn drop(&mut self) {
        // The server is the leader of its own group: the whole group goes.
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

fn required_var(name: &str, what: &str) -> PathBuf {
    match std::env::var_os(name) {
        Some(value) if !value.is_empty() => PathBuf::from(value),
        _ => panic!(
            "{name} is not set: it must name {what} for the llama.cpp test server. Run the tests \
             through scripts/test.sh, which installs the server and sets {PYTHON_VAR} and \
             {MODEL_VAR}."
        ),
    }
}

/// `scripts/llamacpp/serve.py` of this repository.
fn serve_script() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/llamacpp/serve.py");
    assert!(
        script.is_file(),
        "the llama.cpp server script is missing at {}",
        script.display()
    );
    script
}

/// Starts serve.py on a port that was free a moment ago, in a process group of its own.
fn spawn(python: &Path, model: &Path, script: &Path, options: Options) -> (LlamaCppServer, u16) {
    let port = match std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
        Ok(addr) => addr.port(),
        Err(e) => panic!("no free loopback port for the llama.cpp server: {e}"),
    };
    let log =
        std::env::temp_dir().join(format!("decima-llamacpp-{}-{port}.log", std::process::id()));
    let out = match std::fs::File::create(&log).and_then(|f| Ok((f.try_clone()?, f))) {
        Ok(files) => files,
        Err(e) => panic!("cannot create the llama.cpp log {}: {e}", log.display()),
    };
    let mut command = Command::new(python);
    command
        .arg(script)
        .arg(model)
        .arg(port.to_string())
        .arg(options.n_ctx.to_string())
        .arg("--parallel")
        .arg(options.parallel.to_string());
    if !options.slots_endpoint {
        command.arg("--no-slots");
    }
    // A group of its own on Unix, so the server's workers end with it.
    decima_process::ProcessTree::prepare_std(&mut command);
    let child = command
        .stdin(Stdio::null())
        .stdout(out.0)
        .stderr(out.1)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    (LlamaCppServer { child, addr, log }, port)
}

/// The status of `GET /health`, or None when nothing answers yet.
async fn health(addr: SocketAddr) -> Option<u16> {
    let ask = async {
        let mut stream = TcpStream::connect(addr).await.ok()?;
        let request = format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).await.ok()?;
        std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
    };
    tokio::time::timeout(Duration::from_secs(2), ask)
        .await
        .ok()?
}
