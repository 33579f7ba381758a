//! What the agent CLI tests share: a scripted model, a data directory and a workspace, and
//! running the `decima` binary against them.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use decima_core::Message;
use decima_store::Store;
use decima_testkit::{LlmServer, Reply, ScriptedToolCall, Turn};
use serde_json::Value;

pub const KEY: &str = "sk-test-agent-cli-0123456789";

/// One test's world: the scripted model, a data directory (with `decima.db`) and a workspace.
pub struct Env {
    pub server: LlmServer,
    pub dir: tempfile::TempDir,
    /// A shared PostgreSQL store the commands use instead of the data directory's file.
    pub database_url: Option<String>,
}

impl Env {
    pub async fn new() -> Self {
        let env = Self {
            server: LlmServer::start().await,
            dir: tempfile::tempdir().unwrap(),
            database_url: None,
        };
        std::fs::create_dir_all(env.ws()).unwrap();
        env
    }

    /// The same world on a fresh, migrated PostgreSQL database of the tests' cluster.
    pub async fn on_postgres(label: &str) -> Self {
        let mut env = Self::new().await;
        env.database_url = Some(decima_testkit::postgres::fresh_database(label).await);
        let migrated = env.decima(&["db", "migrate"]).await;
        assert!(migrated.status.success(), "{}", text(&migrated.stderr));
        env
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The workspace the runs are given with `--workspace`.
    pub fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// `decima ARGS` with the provider from the `DECIMA_*` environment and nothing on stdin.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_decima"));
        // Runs here test the loop, not the tenth man: its final review would ask the scripted
        // model for one more answer. The review tests turn it on explicitly.
        let mut args: Vec<&str> = args.to_vec();
        if args.first() == Some(&"run") && !args.contains(&"--tenth-man") {
            args.splice(1..1, ["--tenth-man", "off"]);
        }
        // Nor the figures of their answers, which the figure tests check with `--figures on`.
        if args.first() == Some(&"run") && !args.contains(&"--figures") {
            args.splice(1..1, ["--figures", "off"]);
        }
        cmd.arg("--data-dir").arg(self.data_dir());
        if let Some(url) = &self.database_url {
            cmd.arg("--database-url").arg(url);
        }
        cmd.args(&args)
            .env_remove("DECIMA_DATA_DIR")
            .env_remove("DECIMA_DATABASE_URL")
            .env("DECIMA_SECRET_BACKEND", "file")
            .env("DECIMA_PROVIDER_KIND", "openai")
            .env("DECIMA_BASE_URL", self.server.openai_base_url())
            .env("DECIMA_MODEL", "gpt-4o")
            .env("DECIMA_API_KEY", KEY)
            .env("DECIMA_CONTEXT_WINDOW", "128000")
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `decima ARGS` to its end, in a blocking thread so the server on this runtime keeps
    /// serving.
    pub async fn decima(&self, args: &[&str]) -> Output {
        let mut cmd = self.command(args);
        tokio::task::spawn_blocking(move || cmd.output().unwrap())
            .await
            .unwrap()
    }

    /// `decima mcp add ARGS…`, which must succeed.
    pub async fn mcp_add(&self, args: &[&str]) {
        let mut all = vec!["mcp", "add"];
        all.extend_from_slice(args);
        let out = self.decima(&all).await;
        assert!(
            out.status.success(),
            "mcp add {args:?}: {}",
            text(&out.stderr)
        );
    }

    /// `decima run --workspace WS ARGS… TASK`.
    pub async fn run(&self, extra: &[&str], task: &str) -> Output {
        let ws = self.ws().to_string_lossy().into_owned();
        let mut args = vec!["run", "--workspace", ws.as_str()];
        args.extend_from_slice(extra);
        args.push(task);
        self.decima(&args).await
    }

    /// Starts `decima run --workspace WS TASK` without waiting for it.
    pub fn spawn_run(&self, task: &str) -> Child {
        self.spawn_run_with(&[], task)
    }

    /// Starts `decima run --workspace WS EXTRA… TASK` without waiting for it.
    pub fn spawn_run_with(&self, extra: &[&str], task: &str) -> Child {
        let ws = self.ws().to_string_lossy().into_owned();
        let mut args = vec!["run", "--workspace", ws.as_str()];
        args.extend_from_slice(extra);
        args.push(task);
        self.command(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// `decima execution show ID --json`, parsed.
    pub async fn show(&self, id: &str) -> Value {
        let out = self.decima(&["execution", "show", id, "--json"]).await;
        assert!(out.status.success(), "show {id}: {}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// The database the binary wrote, opened the way the runtime opens it.
    pub async fn store(&self) -> Store {
        if let Some(url) = &self.database_url {
            let location = decima_store::StoreLocation::parse(url).unwrap();
            return Store::connect(&location, decima_llm::tokens::store_counter())
                .await
                .unwrap();
        }
        std::fs::create_dir_all(self.data_dir()).unwrap();
        Store::open(
            &self.data_dir().join("decima.db"),
            decima_llm::tokens::store_counter(),
        )
        .await
        .unwrap()
    }

    /// Every live message of the execution's conversation, read from the SQLite file.
    pub async fn messages(&self, execution: &Value) -> Vec<Message> {
        let conversation = execution["conversation_id"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        self.store()
            .await
            .messages()
            .all(conversation)
            .await
            .unwrap()
    }

    pub fn say(&self, text: &str) {
        self.server.enqueue(Reply::Stream(Turn {
            text: vec![text.into()],
            ..Turn::default()
        }));
    }

    pub fn call(&self, name: &str, args: Value) {
        self.raw_call(name, &args.to_string());
    }

    /// A tool call whose arguments are sent verbatim, JSON or not; its id is `call_N`, N the
    /// number of the request it answers.
    pub fn raw_call(&self, name: &str, raw: &str) {
        let n = self.server.requests().len() + self.server.pending_replies();
        self.turn("", &[(&format!("call_{n}"), name, raw)]);
    }

    /// One answer with some text and then these calls: (id, tool, raw arguments).
    pub fn turn(&self, text: &str, calls: &[(&str, &str, &str)]) {
        self.server.enqueue(Reply::Stream(Turn {
            text: if text.is_empty() {
                Vec::new()
            } else {
                vec![text.into()]
            },
            tool_calls: calls
                .iter()
                .map(|(id, name, raw)| ScriptedToolCall {
                    id: (*id).into(),
                    name: (*name).into(),
                    argument_chunks: vec![(*raw).into()],
                })
                .collect(),
            ..Turn::default()
        }));
    }

    /// The whole JSON body of request `i` (0-based) as text.
    pub fn request_text(&self, i: usize) -> String {
        self.server.requests()[i].json.as_ref().unwrap().to_string()
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The id of the `execution <uuid>` line on stderr; panics when there is none.
pub fn execution_id(stderr: &[u8]) -> String {
    let stderr = text(stderr);
    let id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("execution "))
        .unwrap_or_else(|| panic!("no `execution <id>` line: {stderr}"))
        .trim()
        .to_owned();
    assert!(is_uuid(&id), "{id:?} is not a uuid: {stderr}");
    id
}

pub fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

// ---------------------------------------------------------------------------------------------
// The Docker sandbox, on the real engine the test scripts start.

/// The image the test scripts build with `docker import`.
pub const TEST_IMAGE: &str = "decima-test:busybox";

/// Removes every container and volume of one data directory's sandboxes when dropped, so a
/// failed test leaves nothing running.
pub struct DockerCleanup(pub String);

impl Drop for DockerCleanup {
    fn drop(&mut self) {
        let filter = format!("label=decima.instance={}", self.0);
        for (list, remove) in [
            (
                vec!["ps", "-aq", "--filter", &filter],
                vec!["rm", "-f", "-v"],
            ),
            (
                vec!["volume", "ls", "-q", "--filter", &filter],
                vec!["volume", "rm", "-f"],
            ),
        ] {
            let Ok(out) = std::process::Command::new("docker").args(&list).output() else {
                continue;
            };
            let ids: Vec<String> = text(&out.stdout)
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            if !ids.is_empty() {
                let _ = std::process::Command::new("docker")
                    .args(&remove)
                    .args(&ids)
                    .output();
            }
        }
    }
}

/// The last tool result the model got in request `i` (0-based).
pub fn last_tool_result(env: &Env, i: usize) -> String {
    env.server.requests()[i].json.clone().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A small sales table, as an analyst's export of one would read.
pub const SALES_CSV: &str = "region,month,revenue\nEMEA,2026-01,1200\nEMEA,2026-02,1350\n\
                             APAC,2026-01,800\nAPAC,2026-02,950\n";

/// A conversation in the analyst's image (the conversation's default sandbox settings, as
/// `scripts/test.sh` builds the image), and the cleanup of its containers.
pub async fn analyst_conversation(env: &Env, title: &str) -> (String, DockerCleanup) {
    let out = env
        .decima(&["conversation", "create", "--title", title])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id = text(&out.stdout).trim().to_owned();
    let data_dir = std::path::absolute(env.data_dir()).unwrap();
    let instance = decima_sandbox::DockerEngine::instance_for_data_dir(&data_dir);
    (id, DockerCleanup(instance))
}

/// A conversation whose sandbox runs the test image, and the cleanup of its containers.
pub async fn docker_conversation(env: &Env) -> (String, DockerCleanup) {
    let engine = std::process::Command::new("docker")
        .args(["image", "inspect", TEST_IMAGE])
        .output()
        .expect("the docker CLI: run scripts/test.sh, which installs and starts the engine");
    assert!(
        engine.status.success(),
        "no Docker engine or no {TEST_IMAGE} image: run scripts/test.sh, which starts dockerd \
         and builds the image ({})",
        text(&engine.stderr)
    );
    let out = env
        .decima(&["conversation", "create", "--title", "docker"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id = text(&out.stdout).trim().to_owned();
    let out = env
        .decima(&["conversation", "sandbox", &id, "--image", TEST_IMAGE])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let data_dir = std::path::absolute(env.data_dir()).unwrap();
    let instance = decima_sandbox::DockerEngine::instance_for_data_dir(&data_dir);
    (id, DockerCleanup(instance))
}

/// Waits until `path` exists; panics after `limit`, or when `child` exits first.
pub async fn wait_for_file(path: &std::path::Path, limit: std::time::Duration, child: &mut Child) {
    let started = std::time::Instant::now();
    while !path.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                std::io::Read::read_to_string(&mut pipe, &mut stderr).unwrap();
            }
            panic!(
                "decima exited ({status}) before {} appeared: {stderr}",
                path.display()
            );
        }
        assert!(
            started.elapsed() < limit,
            "{} did not appear in {limit:?}",
            path.display()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // The file is created before the shell writes to it.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
}

pub fn read_pid(path: &std::path::Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Kills a process group the test left behind; quiet when it is already gone.
pub fn kill_group(pgid: i32) {
    // `kill -- -0` would mean the test's own group.
    assert!(pgid > 1, "not a command's process group: {pgid}");
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status();
}

/// The stored result of the tool call `call_id`.
pub fn tool_result<'m>(messages: &'m [Message], call_id: &str) -> &'m str {
    messages
        .iter()
        .find(|m| m.role == decima_core::Role::Tool && m.tool_call_id.as_deref() == Some(call_id))
        .unwrap_or_else(|| panic!("no stored result for {call_id}"))
        .content
        .as_str()
}

/// The ids of the tool calls the model made, in order.
pub fn call_ids(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| c.id.clone()))
        .collect()
}

/// Scripts one answer with two shell calls: the first writes its process group to `pid`, notes
/// `ran` in `effects` and sleeps ten minutes (a run to kill or stall mid-call); the second,
/// which must never run after that, would note `second`.
pub fn script_long_call_then_another(env: &Env) {
    env.turn(
        "",
        &[
            (
                "call_0",
                "shell",
                &serde_json::json!({"command": "echo $$ > pid; echo ran >> effects; sleep 600"})
                    .to_string(),
            ),
            (
                "call_1",
                "shell",
                &serde_json::json!({"command": "echo second >> effects"}).to_string(),
            ),
        ],
    );
}
