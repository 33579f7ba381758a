//! The real app in WebKit: built with the UI embedded, driven through tauri-driver and
//! WebKitWebDriver, checked against the SQLite file it writes.
//!
//! Needs a display (scripts/test.sh runs it under `xvfb-run -a`) and `tauri-driver` on PATH or in
//! ~/.cargo/bin. Without them it fails with a message saying so: it never skips.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use decima_core::{NewMessage, Role, ToolCall};
use decima_store::Store;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;

const WAIT: Duration = Duration::from_secs(30);

/// tauri-driver in its own process group, stopped with SIGTERM so that it takes WebKitWebDriver
/// and the app down with it (SIGKILL would leave WebKitWebDriver running).
struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    fn start() -> Self {
        use std::os::unix::process::CommandExt;
        assert!(
            std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some(),
            "the end-to-end test needs a display: run it under `xvfb-run -a` (scripts/test.sh does)"
        );
        let port = free_port();
        let native_port = free_port();
        let child = Command::new(tauri_driver())
            .args(["--port", &port.to_string(), "--native-port", &native_port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .process_group(0)
            .spawn()
            .expect("cannot start tauri-driver (scripts/test.sh installs it with `cargo install tauri-driver`)");
        // tauri-driver accepts connections before WebKitWebDriver behind it is up, and drops a
        // request sent in that window (tauri-apps/tauri#15156). Wait for both ports, then for a
        // `/status` answered through the proxy.
        let started = Instant::now();
        for (what, p) in [("tauri-driver", port), ("WebKitWebDriver", native_port)] {
            while std::net::TcpStream::connect(("127.0.0.1", p)).is_err() {
                assert!(
                    started.elapsed() < WAIT,
                    "{what} did not listen on port {p}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        while !status_ready(port) {
            assert!(
                started.elapsed() < WAIT,
                "tauri-driver on port {port} never answered /status as ready"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Self { child, port }
    }
}

/// One `GET /status` through tauri-driver; true when the WebDriver answers 200 with `ready`.
fn status_ready(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request =
        format!("GET /status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = Vec::new();
    let mut chunk = [0u8; 1024];
    while let Ok(n @ 1..) = stream.read(&mut chunk) {
        answer.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&answer);
        if text.starts_with("HTTP/1.1 200") && text.contains("\"ready\":true") {
            return true;
        }
    }
    false
}

impl Drop for Driver {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.wait();
    }
}

fn tauri_driver() -> PathBuf {
    let in_cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .map(|home| home.join("bin/tauri-driver"));
    match in_cargo_home {
        Some(path) if path.is_file() => path,
        _ => PathBuf::from("tauri-driver"),
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/e2e-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn connect(driver: &Driver, data_dir: &Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert("browserName".into(), "wry".into());
    caps.insert(
        "tauri:options".into(),
        serde_json::json!({
            "application": env!("CARGO_BIN_EXE_decima-desktop"),
            "args": ["--data-dir", data_dir],
        }),
    );
    ClientBuilder::new(HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("WebDriver session for the Decima app")
}

/// Polls until some element matching `css` has text containing `needle`; on timeout, saves a
/// screenshot and the page source.
async fn wait_for_text(client: &Client, css: &str, needle: &str) -> fantoccini::elements::Element {
    let started = Instant::now();
    loop {
        for element in client.find_all(Locator::Css(css)).await.unwrap() {
            // textContent, not the rendered text: WebKitWebDriver leaves out text inside <button>.
            let text = element
                .prop("textContent")
                .await
                .ok()
                .flatten()
                .unwrap_or_default();
            if text.contains(needle) {
                return element;
            }
        }
        if started.elapsed() > WAIT {
            save_failure_artifacts(client).await;
            panic!("no {css} with text {needle:?} appeared (see target/e2e-artifacts/failure.*)");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Keeps what the window showed when a wait timed out, for the person reading the CI log.
async fn save_failure_artifacts(client: &Client) {
    if let Ok(png) = client.screenshot().await {
        let _ = std::fs::write(artifacts().join("failure.png"), png);
    }
    if let Ok(html) = client.source().await {
        let _ = std::fs::write(artifacts().join("failure.html"), html);
    }
}

async fn titles_in_file(db: &Path) -> Vec<(String, Option<i64>)> {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=ro", db.display()))
        .await
        .unwrap();
    let rows: Vec<(String, Option<i64>)> =
        sqlx::query_as("SELECT title, deleted_at FROM conversations ORDER BY created_at")
            .fetch_all(&pool)
            .await
            .unwrap();
    pool.close().await;
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_rename_and_read_conversations_in_the_real_app() {
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("decima.db");

    // A conversation written by the store before the app starts: the app must show it.
    let seeded = {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        let messages = [
            NewMessage::new(Role::User, "Which files are in /data/q3?"),
            NewMessage {
                reasoning: Some("List the directory first.".into()),
                tool_calls: vec![ToolCall {
                    id: "call_e2e".into(),
                    name: "shell".into(),
                    arguments: "{\"cmd\":\"ls /data/q3\"}".into(),
                }],
                ..NewMessage::new(Role::Assistant, "")
            },
            NewMessage {
                tool_call_id: Some("call_e2e".into()),
                ..NewMessage::new(Role::Tool, "invoices.csv\nledger.csv")
            },
        ];
        let c = store
            .conversations()
            .import("Seeded 种子 conversation", None, &messages)
            .await
            .unwrap();
        store.close().await;
        c.id
    };

    let driver = Driver::start();
    let client = connect(&driver, data.path()).await;

    // The seeded conversation is listed, and opening it shows its messages read-only.
    let item = wait_for_text(
        &client,
        "[data-testid=conversation-item]",
        "Seeded 种子 conversation",
    )
    .await;
    assert_eq!(
        item.attr("data-conversation-id").await.unwrap(),
        Some(seeded.to_string())
    );
    item.click().await.unwrap();
    wait_for_text(&client, "[data-testid=message]", "invoices.csv").await;
    let messages = client
        .find_all(Locator::Css("[data-testid=message]"))
        .await
        .unwrap();
    assert_eq!(messages.len(), 3);
    let page = client.source().await.unwrap();
    assert!(page.contains("call_e2e"), "tool calls are shown");

    // Create one through the UI.
    let title = "E2E quarterly review 季度复盘";
    let input = client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("[data-testid=new-conversation-title]"))
        .await
        .unwrap();
    input.send_keys(title).await.unwrap();
    client
        .find(Locator::Css("[data-testid=new-conversation-submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let created = wait_for_text(&client, "[data-testid=conversation-item]", title).await;
    let created_id = created
        .attr("data-conversation-id")
        .await
        .unwrap()
        .expect("item carries its id");

    let screenshot = client.screenshot().await.unwrap();
    assert!(screenshot.starts_with(b"\x89PNG"), "a PNG screenshot");
    std::fs::write(artifacts().join("conversation-created.png"), &screenshot).unwrap();

    // It is in the SQLite file, written by the app process.
    let rows = titles_in_file(&db).await;
    assert!(
        rows.iter()
            .any(|(t, deleted)| t == title && deleted.is_none()),
        "{rows:?}"
    );

    // Rename it through the UI; the file follows.
    created
        .find(Locator::Css("[data-testid=rename-conversation]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let rename = client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("[data-testid=rename-input]"))
        .await
        .unwrap();
    rename.clear().await.unwrap();
    rename.send_keys("Renamed in WebKit\u{E007}").await.unwrap(); // U+E007 is WebDriver's Enter key
    wait_for_text(
        &client,
        "[data-testid=conversation-item]",
        "Renamed in WebKit",
    )
    .await;
    let rows = titles_in_file(&db).await;
    assert!(
        rows.iter().any(|(t, _)| t == "Renamed in WebKit"),
        "{rows:?}"
    );
    assert!(!rows.iter().any(|(t, _)| t == title), "{rows:?}");

    // Delete it; the row stays in the file, soft-deleted.
    let item = wait_for_text(
        &client,
        "[data-testid=conversation-item]",
        "Renamed in WebKit",
    )
    .await;
    item.find(Locator::Css("[data-testid=delete-conversation]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("[data-testid=undo-delete]"))
        .await
        .unwrap();
    let started = Instant::now();
    loop {
        let rows = titles_in_file(&db).await;
        if rows
            .iter()
            .any(|(t, deleted)| t == "Renamed in WebKit" && deleted.is_some())
        {
            break;
        }
        assert!(
            started.elapsed() < WAIT,
            "soft delete never reached the file: {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        client
            .find(Locator::Css(&format!(
                "[data-conversation-id='{created_id}']"
            )))
            .await
            .is_err(),
        "the deleted conversation left the list"
    );
    std::fs::write(
        artifacts().join("conversation-deleted.png"),
        client.screenshot().await.unwrap(),
    )
    .unwrap();

    client.close().await.unwrap();
    drop(driver);
}
