//! What the end-to-end tests share: tauri-driver, the WebDriver session on the real app, and
//! waiting for what the window shows.
#![allow(dead_code)]
// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;

pub const WAIT: Duration = Duration::from_secs(30);

/// tauri-driver in its own process group, stopped with SIGTERM so that it takes WebKitWebDriver
/// and the app down with it (SIGKILL would leave WebKitWebDriver running).
pub struct Driver {
    child: Child,
    port: u16,
}

/// Held by the end-to-end test that runs now (a tokio mutex, so that a test waiting for its
/// turn only awaits, and a test that failed while holding it still gives it back).
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Taken first by every end-to-end test and held to its end: the tests share one test binary
/// and one X display, several read the whole screen or move the focus, and the figures are
/// measured on a machine doing nothing else, so they run one after another.
pub async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().await
}

impl Driver {
    pub fn start() -> Self {
        Self::start_with_env(&[])
    }

    /// Like [`Driver::start`], with variables for tauri-driver and so for the app it starts.
    pub fn start_with_env(vars: &[(&str, &str)]) -> Self {
        use std::os::unix::process::CommandExt;
        assert!(
            std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some(),
            "the end-to-end test needs a display: run it under `xvfb-run -a` (scripts/test.sh does)"
        );
        let port = free_port();
        let native_port = free_port();
        let child = Command::new(tauri_driver())
            .args(["--port", &port.to_string(), "--native-port", &native_port.to_string()])
            .envs(vars.iter().copied())
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

pub fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/e2e-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The app under test: this build's, or the binary `DECIMA_E2E_APP` names (an installed
/// package's `/usr/bin/decima-desktop`, whose cold start docs/PERFORMANCE.md sets beside this
/// build's).
pub fn app_binary() -> String {
    std::env::var("DECIMA_E2E_APP")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_decima-desktop").to_owned())
}

pub async fn connect(driver: &Driver, data_dir: &Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert("browserName".into(), "wry".into());
    caps.insert(
        "tauri:options".into(),
        serde_json::json!({
            "application": app_binary(),
            "args": ["--data-dir", data_dir],
        }),
    );
    // tauri-driver sometimes drops the new-session request itself (the connection closes
    // with no answer, while WebKitWebDriver starts the app); nothing of the app's has run
    // then, so the request is sent again, a few times, before the test fails on it.
    let url = format!("http://127.0.0.1:{}", driver.port);
    let mut attempt = 1;
    loop {
        match ClientBuilder::new(HttpConnector::new())
            .capabilities(caps.clone())
            .connect(&url)
            .await
        {
            Ok(client) => return client,
            Err(e)
                if attempt < 3
                    && matches!(
                        e,
                        fantoccini::error::NewSessionError::Lost(_)
                            | fantoccini::error::NewSessionError::FailedC(_)
                    ) =>
            {
                eprintln!("the WebDriver session did not start (attempt {attempt}): {e}; again");
                attempt += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => panic!("WebDriver session for the Decima app: {e:?}"),
        }
    }
}

/// Polls until some element matching `css` has text containing `needle`; on timeout, saves a
/// screenshot and the page source. React re-renders replace nodes at any moment, and WebKit then
/// answers a lookup with a stale-element error: that counts as "not yet" and the poll goes on.
/// The element returned can go stale the same way, so to click it use [`click_text`].
pub async fn wait_for_text(
    client: &Client,
    css: &str,
    needle: &str,
) -> fantoccini::elements::Element {
    let started = Instant::now();
    loop {
        if let Some(element) = find_with_text(client, css, needle).await {
            return element;
        }
        if started.elapsed() > WAIT {
            save_failure_artifacts(client).await;
            panic!("no {css} with text {needle:?} appeared (see target/e2e-artifacts/failure.*)");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One look for an element matching `css` whose text contains `needle`; any WebDriver error
/// (a node replaced mid-lookup) is a miss.
async fn find_with_text(
    client: &Client,
    css: &str,
    needle: &str,
) -> Option<fantoccini::elements::Element> {
    for element in client.find_all(Locator::Css(css)).await.ok()? {
        // textContent, not the rendered text: WebKitWebDriver leaves out text inside <button>.
        let text = element.prop("textContent").await.ok().flatten();
        if text.is_some_and(|t| t.contains(needle)) {
            return Some(element);
        }
    }
    None
}

/// Clicks the element matching `css` whose text contains `needle`, looking it up again when a
/// re-render replaced it between the lookup and the click.
pub async fn click_text(client: &Client, css: &str, needle: &str) {
    click_found(client, &format!("{css} with text {needle:?}"), || {
        find_with_text(client, css, needle)
    })
    .await;
}

/// Clicks the first element matching `css`, looking it up again when it is not there yet or a
/// re-render replaced it.
pub async fn click(client: &Client, css: &str) {
    click_found(client, css, || async {
        client.find(Locator::Css(css)).await.ok()
    })
    .await;
}

/// Looks an element up with `find` and clicks it, again and again until a click lands.
async fn click_found<F, Fut>(client: &Client, what: &str, mut find: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<fantoccini::elements::Element>>,
{
    let started = Instant::now();
    loop {
        if let Some(element) = find().await
            && element.click().await.is_ok()
        {
            return;
        }
        if started.elapsed() > WAIT {
            save_failure_artifacts(client).await;
            panic!("cannot click {what} (see target/e2e-artifacts/failure.*)");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Polls until `check` holds; on timeout saves the window and fails with `what`.
pub async fn wait_until<F, Fut>(client: &Client, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while !check().await {
        if started.elapsed() > WAIT {
            save_failure_artifacts(client).await;
            panic!("{what} (see target/e2e-artifacts/failure.*)");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// How many elements match `css`, counted inside the page in one script, so that no element
/// handle can go stale on the way.
pub async fn count(client: &Client, css: &str) -> usize {
    let n = client
        .execute(
            "return document.querySelectorAll(arguments[0]).length;",
            vec![serde_json::json!(css)],
        )
        .await
        .unwrap();
    n.as_u64().map_or(0, |n| n as usize)
}

/// The text of the first element matching `css`, or "" when there is none; read inside the page
/// in one script.
pub async fn text_of(client: &Client, css: &str) -> String {
    let text = client
        .execute(
            "const e = document.querySelector(arguments[0]); return e ? e.textContent : '';",
            vec![serde_json::json!(css)],
        )
        .await
        .unwrap();
    text.as_str().unwrap_or_default().to_owned()
}

/// An attribute of the first element matching `css`; `None` when there is no such element or
/// attribute. Read inside the page in one script.
pub async fn attr(client: &Client, css: &str, name: &str) -> Option<String> {
    let value = client
        .execute(
            "const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;",
            vec![serde_json::json!(css), serde_json::json!(name)],
        )
        .await
        .unwrap();
    value.as_str().map(str::to_owned)
}

/// Whether the first element matching `css` whose text contains `needle` lies wholly inside the
/// first element matching `container` (its bounding rect within the container's), as laid out
/// now; false when either is missing or it has no size. Read inside the page in one script.
pub async fn shown_within(client: &Client, css: &str, needle: &str, container: &str) -> bool {
    let shown = client
        .execute(
            "const e = [...document.querySelectorAll(arguments[0])]\
               .find((x) => x.textContent.includes(arguments[1]));\
             const c = document.querySelector(arguments[2]);\
             if (!e || !c) return false;\
             const r = e.getBoundingClientRect(), v = c.getBoundingClientRect();\
             return r.height > 0 && r.top >= v.top - 1 && r.bottom <= v.bottom + 1;",
            vec![
                serde_json::json!(css),
                serde_json::json!(needle),
                serde_json::json!(container),
            ],
        )
        .await
        .unwrap();
    shown == serde_json::json!(true)
}

/// Whether the first element matching `css` is on screen as it is: inside the window, with
/// its middle not covered by anything else. Nothing is scrolled to look. Read in one script.
pub async fn on_screen(client: &Client, css: &str) -> bool {
    let shown = client
        .execute(
            "const e = document.querySelector(arguments[0]);\
             if (!e) return false;\
             const r = e.getBoundingClientRect();\
             if (r.width === 0 || r.height === 0) return false;\
             if (r.top < 0 || r.left < 0 || r.bottom > window.innerHeight || r.right > window.innerWidth) return false;\
             const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);\
             return hit !== null && (hit === e || e.contains(hit));",
            vec![serde_json::json!(css)],
        )
        .await
        .unwrap();
    shown == serde_json::json!(true)
}

/// Saves a PNG of the window under `target/e2e-artifacts`, for the person reviewing the run.
///
/// WebKitGTK answers a screenshot after the next update of the view. Without compositing (the
/// app turns it off where there is no GPU, as under Xvfb) a window where nothing changes sends
/// no update, and the screenshot waits out a 60-second timeout. So repaints are scheduled for
/// while the screenshot waits: an opacity of 0.999 and back, which no eye can see.
pub async fn shot(client: &Client, name: &str) {
    schedule_repaints(client).await;
    let png = client.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    std::fs::write(artifacts().join(name), &png).unwrap();
}

/// Keeps what the window showed when a wait timed out, for the person reading the CI log.
pub async fn save_failure_artifacts(client: &Client) {
    schedule_repaints(client).await;
    if let Ok(png) = client.screenshot().await {
        let _ = std::fs::write(artifacts().join("failure.png"), png);
    }
    if let Ok(html) = client.source().await {
        let _ = std::fs::write(artifacts().join("failure.html"), html);
    }
    // The artifacts stay on the machine that failed; the list's state goes to the test's output.
    eprintln!("message list at the failure: {}", list_state(client).await);
}

/// Where the message list stands: its scroll, how many rows it holds, and the rows rendered
/// (index, kind, seq), to read a failure from the test's output alone.
pub async fn list_state(client: &Client) -> String {
    let script = "const s = document.querySelector('[data-testid=message-scroll]');
        const l = document.querySelector('[data-testid=message-list]');
        if (!s || !l) return 'no message list';
        const rows = [...l.children].map((li) =>
            `${li.dataset.index}:${li.dataset.testid}${li.dataset.seq ? '#' + li.dataset.seq : ''}`);
        return `scrollTop ${s.scrollTop} of ${s.scrollHeight} (view ${s.clientHeight}), `
            + `${l.dataset.count} rows, rendered ${rows.join(' ')}`;";
    match client.execute(script, vec![]).await {
        Ok(v) => v.as_str().unwrap_or_default().to_owned(),
        Err(e) => format!("unreadable: {e}"),
    }
}

/// Scrolls the message list to its end and then up a view at a time, as a reader looking for
/// a row would, until `css` is rendered; false when the top is reached without it. The list is
/// virtualized, so a row far from the view is not in the page until the reader gets near it.
pub async fn scroll_up_to(client: &Client, css: &str) -> bool {
    if count(client, css).await > 0 {
        return true;
    }
    client
        .execute(
            "const s = document.querySelector('[data-testid=message-scroll]');
             s.scrollTop = s.scrollHeight;",
            vec![],
        )
        .await
        .unwrap();
    let started = Instant::now();
    while started.elapsed() < WAIT {
        if count(client, css).await > 0 {
            return true;
        }
        let top = client
            .execute(
                "const s = document.querySelector('[data-testid=message-scroll]');
                 s.scrollBy(0, -s.clientHeight); return s.scrollTop;",
                vec![],
            )
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(150)).await;
        if top.as_f64() == Some(0.0) && count(client, css).await == 0 {
            return false;
        }
    }
    false
}

/// Rows of `sql`, read from the app's SQLite file through a read-only connection of the
/// test's own, as an outside observer of what the app wrote.
pub async fn rows<T>(db: &Path, sql: &str) -> Vec<T>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow> + Send + Unpin,
{
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=ro", db.display()))
        .await
        .unwrap();
    let rows = sqlx::query_as(sqlx::AssertSqlSafe(sql.to_owned()))
        .fetch_all(&pool)
        .await
        .unwrap();
    pool.close().await;
    rows
}

pub async fn titles_in_file(db: &Path) -> Vec<(String, Option<i64>)> {
    rows(
        db,
        "SELECT title, deleted_at FROM conversations ORDER BY created_at",
    )
    .await
}

/// An OpenAI-compatible provider at `base_url` with a `window`-token context.
pub fn provider(name: &str, base_url: String, window: u32) -> decima_store::NewProvider {
    decima_store::NewProvider {
        name: name.into(),
        kind: "openai".into(),
        preset: None,
        base_url,
        model: "qwen3".into(),
        context_window: window,
        settings: serde_json::json!({}),
    }
}

/// Repaints for a screenshot to wait on (see [`shot`]).
async fn schedule_repaints(client: &Client) {
    let _ = client
        .execute(
            "for (const ms of [20, 100, 300, 1000]) setTimeout(() => {\
               const s = document.body.style; s.opacity = s.opacity === '0.999' ? '' : '0.999';\
             }, ms);",
            vec![],
        )
        .await;
}

/// A private D-Bus session bus with a real notification daemon (dunst) on it, so a test can
/// read back the native notifications the app showed. Both stop when this is dropped.
pub struct Notifications {
    bus: Child,
    daemon: Child,
    address: String,
}

impl Notifications {
    pub fn start() -> Self {
        use std::io::{BufRead, BufReader};
        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("cannot start dbus-daemon (scripts/test.sh installs the dbus package)");
        let mut address = String::new();
        BufReader::new(bus.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        let address = address.trim().to_owned();
        assert!(
            address.starts_with("unix:"),
            "dbus-daemon printed no address: {address:?}"
        );
        let daemon = Command::new("dunst")
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start dunst (scripts/test.sh installs it)");
        let notifications = Self {
            bus,
            daemon,
            address,
        };
        // dunst owns org.freedesktop.Notifications once `dunstctl` can reach it.
        let started = Instant::now();
        while notifications.dunstctl(&["is-paused"]).is_none() {
            assert!(started.elapsed() < WAIT, "dunst never answered on the bus");
            std::thread::sleep(Duration::from_millis(100));
        }
        notifications
    }

    /// The session bus, for the app's environment.
    pub fn bus_address(&self) -> &str {
        &self.address
    }

    /// The summary and body of each notification shown so far, as dunst's history has them.
    pub fn shown(&self) -> Vec<(String, String)> {
        // Notifications still on screen are not in the history yet.
        self.dunstctl(&["close-all"]);
        let Some(text) = self.dunstctl(&["history"]) else {
            return Vec::new();
        };
        let history: serde_json::Value = serde_json::from_str(&text).unwrap();
        let field = |n: &serde_json::Value, key: &str| {
            n[key]["data"].as_str().unwrap_or_default().to_owned()
        };
        history["data"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|list| list.as_array().into_iter().flatten())
            .map(|n| (field(n, "summary"), field(n, "body")))
            .collect()
    }

    fn dunstctl(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("dunstctl")
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for Notifications {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
        let _ = self.bus.kill();
        let _ = self.bus.wait();
    }
}

/// Moves the X input focus from the app's window to the root window, as switching to another
/// application would (under Xvfb there is no window manager and the app keeps the focus).
pub fn unfocus_window() {
    let root = Command::new("xdotool")
        .args(["search", "--maxdepth", "0", "--name", ""])
        .output()
        .expect("cannot run xdotool (scripts/test.sh installs it)");
    let root = String::from_utf8_lossy(&root.stdout).trim().to_owned();
    assert!(!root.is_empty(), "xdotool found no root window");
    let done = Command::new("xdotool")
        .args(["windowfocus", &root])
        .status()
        .unwrap();
    assert!(done.success(), "xdotool could not move the focus");
}

/// The app's process: the one started with this data directory.
pub fn app_pid(data_dir: &Path) -> u32 {
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline);
        if cmdline.contains("decima-desktop") && cmdline.contains(&*data_dir.to_string_lossy()) {
            return pid;
        }
    }
    panic!("the app's process was not found");
}

/// The files a process has mapped (its libraries), from `/proc/PID/maps`.
pub fn mapped_files(pid: u32) -> Vec<String> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let mut files: Vec<String> = maps
        .lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .filter(|path| path.starts_with('/'))
        .map(str::to_owned)
        .collect();
    files.dedup();
    files
}

/// How many pixels of the whole X screen have exactly this colour, from `xwd -root`: what the
/// display shows, unlike WebDriver's screenshots, which WebKit draws for the test by itself.
pub fn screen_pixels_of(rgb: [u8; 3]) -> usize {
    let out = Command::new("xwd")
        .args(["-root", "-silent"])
        .output()
        .expect("cannot run xwd (scripts/test.sh installs x11-apps)");
    assert!(out.status.success(), "xwd failed");
    let xwd = out.stdout;
    // XWDFileHeader: 25 big-endian CARD32 fields, then the window name, then the colour map.
    let field = |i: usize| u32::from_be_bytes(xwd[i * 4..i * 4 + 4].try_into().unwrap());
    let (header_size, format, width, height) = (field(0), field(2), field(4), field(5));
    let (byte_order, bits_per_pixel, bytes_per_line) = (field(7), field(11), field(12));
    let masks = [field(14), field(15), field(16)];
    let ncolors = field(19);
    assert_eq!(format, 2, "xwd wrote a ZPixmap");
    // Xvfb's 24-bit screens come as 32 or 24 bits a pixel, depending on the server's state.
    let bytes = bits_per_pixel as usize / 8;
    assert!(
        bytes == 3 || bytes == 4,
        "{bits_per_pixel} bits a pixel is not a true-colour screen"
    );
    let data = &xwd[(header_size + ncolors * 12) as usize..];
    let shifts = masks.map(|mask| mask.trailing_zeros());
    let mut count = 0;
    for y in 0..height as usize {
        let row = &data[y * bytes_per_line as usize..][..width as usize * bytes];
        for px in row.chunks_exact(bytes) {
            let v = px.iter().enumerate().fold(0u32, |v, (i, b)| {
                let shift = if byte_order == 0 { i } else { bytes - 1 - i };
                v | u32::from(*b) << (8 * shift)
            });
            let channel = |c: usize| ((v & masks[c]) >> shifts[c]) as u8;
            if [channel(0), channel(1), channel(2)] == rgb {
                count += 1;
            }
        }
    }
    count
}

/// Finds GTK's save dialog by its window title, gives it the keyboard and presses Enter, which
/// accepts the folder and the name it proposes: as a person would, through the X server
/// (xdotool). Blocking: call it from `spawn_blocking`.
pub fn accept_save_dialog(title: &str) {
    let started = Instant::now();
    let window = loop {
        let found = Command::new("xdotool")
            .args(["search", "--name", title])
            .output()
            .expect("xdotool is needed to answer the save dialog (scripts/lib.sh installs it)");
        let ids = String::from_utf8_lossy(&found.stdout).trim().to_owned();
        if let Some(id) = ids.lines().last().filter(|id| !id.is_empty()) {
            break id.to_owned();
        }
        assert!(started.elapsed() < WAIT, "the save dialog never opened");
        std::thread::sleep(Duration::from_millis(200));
    };
    // GTK fills the folder and the name in after the window maps: give it a moment.
    std::thread::sleep(Duration::from_millis(800));
    let focused = Command::new("xdotool")
        .args(["windowfocus", "--sync", &window])
        .status()
        .unwrap();
    assert!(focused.success(), "cannot focus the save dialog");
    let pressed = Command::new("xdotool")
        .args(["key", "--clearmodifiers", "Return"])
        .status()
        .unwrap();
    assert!(pressed.success(), "cannot press Enter in the save dialog");
}
