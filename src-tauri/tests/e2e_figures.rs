//! The desktop's figures, measured on the real app in WebKit (docs/PERFORMANCE.md): cold start
//! to the first paint, idle memory, opening a 100k-message conversation, scrolling it, jumping
//! to its first message and back, and how long a token
//! delta takes from Rust to the screen. It checks that each thing happens (the 100k
//! conversation opens at its last message, the deltas arrive) and prints what it took; the
//! goals are compared in the docs, not asserted, since these machines are noisy.
//!
//! Needs a display and `tauri-driver`, like the other end-to-end tests.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::time::Duration;

use decima_core::{NewMessage, Role};
use decima_store::Store;
use decima_testkit::{LlmServer, Reply, StreamOptions, Turn};
use fantoccini::Locator;
use support::{Driver, app_pid, click, connect, wait_for_text};

const MESSAGES: usize = 100_000;
const DELTAS: usize = 20;
/// Messages of the conversation in markdown with tool calls, scrolled like the 100k one.
const MIXED: usize = 3_000;

/// When a process started, in milliseconds since the epoch (10 ms resolution). The boot is
/// taken from `/proc/uptime` (10 ms steps): `btime` in `/proc/stat` is whole seconds, which put
/// every start up to a second early by an amount that changes with each boot of the machine.
fn started_at_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let ticks: f64 = rest.split(' ').nth(19).unwrap().parse().unwrap();
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    // USER_HZ is 100 on Linux.
    (now - uptime + ticks / 100.0) * 1000.0
}

/// Cold start as an analyst launches the app: no WebDriver session, whose handshake holds the
/// page back. The app logs its first paint, counted from its launch (`app_painted`); three
/// launches, one after another, on the data folder the figures test prepared.
fn cold_start_launched(data: &std::path::Path) {
    let logs = data.join("logs");
    for launch in 1..=3 {
        let _ = std::fs::remove_dir_all(&logs);
        let mut app = std::process::Command::new(support::app_binary())
            .arg("--data-dir")
            .arg(data)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        let line = loop {
            let painted = std::fs::read_dir(&logs)
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|f| std::fs::read_to_string(f.path()).ok())
                .flat_map(|text| {
                    text.lines()
                        .filter(|l| l.contains("window painted"))
                        .map(str::to_owned)
                        .collect::<Vec<_>>()
                })
                .next();
            if let Some(line) = painted {
                break line;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "launch {launch}: the app logged no first paint within 60 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let field = |name: &str| -> String {
            line.split_whitespace()
                .find_map(|f| f.strip_prefix(&format!("{name}=")))
                .unwrap_or("-")
                .to_owned()
        };
        println!(
            "figure: cold start as launched ({launch} of 3), to the first paint {} ms, to the workbench's first frame {} ms",
            field("first_paint_ms"),
            field("first_frame_ms")
        );
        let _ = app.kill();
        let _ = app.wait();
        // WebKit's processes end with the app; give them the moment they take.
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The process and its descendants (WebKit's web and network processes).
fn tree(pid: u32) -> Vec<u32> {
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
                continue;
            };
            let Some(close) = stat.rfind(')') else {
                continue;
            };
            let ppid: u32 = stat[close + 2..]
                .split(' ')
                .nth(1)
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            if ppid == parent && !out.contains(&child) {
                out.push(child);
            }
        }
        i += 1;
    }
    out
}

/// Proportional set size in MiB: shared pages split between the processes that map them.
fn pss_mib(pids: &[u32]) -> f64 {
    let mut kib = 0.0;
    for pid in pids {
        if let Ok(rollup) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) {
            kib += rollup
                .lines()
                .find_map(|l| l.strip_prefix("Pss:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
                .unwrap_or(0.0);
        }
    }
    kib / 1024.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cold_start_idle_memory_and_a_100k_message_conversation() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    // The model answers in 20 deltas, 150 ms apart; reviews find nothing.
    let server = LlmServer::start().await;
    server.respond_with(|request| {
        let reviewing = request.json.as_ref().is_some_and(|j| {
            j["messages"][0]["content"]
                .as_str()
                .is_some_and(|s| s.contains("You are the tenth man"))
        });
        Reply::Stream(if reviewing {
            Turn {
                text: vec![
                    r#"{"risk_level":"none","summary":"ok","findings":[],"open_questions":[]}"#
                        .into(),
                ],
                ..Turn::default()
            }
        } else {
            Turn {
                text: (1..=DELTAS).map(|i| format!("part {i} ")).collect(),
                options: StreamOptions {
                    event_delay: Some(Duration::from_millis(150)),
                    ..StreamOptions::default()
                },
                ..Turn::default()
            }
        })
    });
    {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        store
            .providers()
            .create(support::provider("local", server.openai_base_url(), 32_000))
            .await
            .unwrap();
        let messages: Vec<NewMessage> = (1..=MESSAGES)
            .map(|i| {
                let role = if i % 2 == 1 {
                    Role::User
                } else {
                    Role::Assistant
                };
                NewMessage::new(
                    role,
                    format!(
                        "Message {i}: the ledger line for region R-{} reconciles.",
                        i % 97
                    ),
                )
            })
            .collect();
        store
            .conversations()
            .import("Hundred thousand", None, &messages)
            .await
            .unwrap();
        store
            .conversations()
            .create("Short one", None)
            .await
            .unwrap();
        store
            .conversations()
            .import("Markdown and tools", None, &mixed_messages(MIXED))
            .await
            .unwrap();
        store.close().await;
    }
    cold_start_launched(data.path());

    let driver = Driver::start();
    let client = connect(&driver, data.path()).await;
    wait_for_text(
        &client,
        "[data-testid=conversation-item]",
        "Hundred thousand",
    )
    .await;
    let pid = app_pid(data.path());
    let started = started_at_ms(pid);
    let first_paint = client
        .execute(
            "const p = performance.getEntriesByType('paint')\
               .find(e => e.name === 'first-contentful-paint');\
             return p ? performance.timeOrigin + p.startTime : null;",
            vec![],
        )
        .await
        .unwrap();
    let first_paint = first_paint
        .as_f64()
        .expect("WebKit reports the first contentful paint");
    println!(
        "figure: cold start to first paint {:.0} ms",
        first_paint - started
    );
    // Where that time goes: the process until the page starts loading, then the page (its
    // script parsed and run, the first frame) until the paint; and when React's own first
    // frame (the workbench, not the page's shell) was on screen.
    let page = client
        .execute(
            "return [performance.timeOrigin, window.__decimaFirstRender ?? null];",
            vec![],
        )
        .await
        .unwrap();
    let origin = page[0].as_f64().unwrap();
    println!(
        "figure: cold start, the process until the page loads {:.0} ms, the page until its first paint {:.0} ms",
        origin - started,
        first_paint - origin
    );
    if let Some(rendered) = page[1].as_f64() {
        println!(
            "figure: cold start to the workbench's first frame {:.0} ms",
            rendered - started
        );
    }

    tokio::time::sleep(Duration::from_secs(3)).await;
    let pids = tree(pid);
    println!(
        "figure: idle memory {:.0} MiB PSS over {} processes (the app and WebKit's)",
        pss_mib(&pids),
        pids.len()
    );
    for pid in &pids {
        let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        println!("  {}: {:.0} MiB PSS", name.trim(), pss_mib(&[*pid]));
    }

    // Opening the 100k conversation: from the click to its last message on screen.
    let opened = client
        .execute_async(
            "const done = arguments[arguments.length - 1];\
             const item = [...document.querySelectorAll('[data-testid=conversation-item]')]\
               .find(e => e.textContent.includes('Hundred thousand'));\
             const t0 = performance.now();\
             item.querySelector('[data-testid=conversation-title-button]').click();\
             const poll = () => {\
               const last = document.querySelector('[data-testid=message-scroll] [data-seq=\"100000\"]');\
               if (last) { requestAnimationFrame(() => done(performance.now() - t0)); }\
               else if (performance.now() - t0 > 30000) { done(null); }\
               else { requestAnimationFrame(poll); }\
             };\
             poll();",
            vec![],
        )
        .await
        .unwrap();
    let opened = opened
        .as_f64()
        .expect("the 100k-message conversation opened at its last message");
    println!("figure: open a {MESSAGES}-message conversation {opened:.0} ms");
    let shown = support::count(&client, "[data-testid=message]").await;
    assert!(
        shown < 100,
        "the list is virtualized: only the rows near the view are rendered, not {shown}"
    );

    scroll_and_report(&client, "plain prose").await;

    // Jumps in the 100k conversation, from the click to the message on screen: to seq 1 (the
    // find bar's "First message"), then back to the end ("Latest"). Each reads one page.
    click(&client, "[data-testid=find-button]").await;
    for (button, seq) in [("jump-to-start", 1), ("jump-to-end", MESSAGES)] {
        let took = client
            .execute_async(
                "const [button, seq, done] = arguments;\
                 const t0 = performance.now();\
                 document.querySelector(`[data-testid=${button}]`).click();\
                 const visible = () => {\
                   const e = document.querySelector(`[data-testid=message-scroll] [data-seq=\"${seq}\"]`);\
                   if (!e) return false;\
                   const r = e.getBoundingClientRect();\
                   const v = document.querySelector('[data-testid=message-scroll]').getBoundingClientRect();\
                   return r.height > 0 && r.top >= v.top - 1 && r.top < v.bottom;\
                 };\
                 const poll = () => {\
                   if (visible()) { requestAnimationFrame(() => done(performance.now() - t0)); }\
                   else if (performance.now() - t0 > 30000) { done(null); }\
                   else { requestAnimationFrame(poll); }\
                 };\
                 poll();",
                vec![serde_json::json!(button), serde_json::json!(seq)],
            )
            .await
            .unwrap();
        let took = took
            .as_f64()
            .unwrap_or_else(|| panic!("{button} never showed message {seq}"));
        println!("figure: jump to seq {seq} of {MESSAGES} ({button}) {took:.0} ms");
    }

    // The same scroll through markdown, tables, code and tool cards: what rows cost to render.
    support::click_text(
        &client,
        "[data-testid=conversation-item]",
        "Markdown and tools",
    )
    .await;
    wait_for_text(&client, "[data-testid=message]", "compare with").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    scroll_and_report(&client, "markdown and tools").await;

    // At 900x700: hovering a conversation, opening the folded sidebar and switching to another
    // conversation, each from its input to the frame that shows it.
    one_frame_figures(&client).await;

    // A delta's way to the screen: Rust stamps each text delta as it forwards it; the page
    // notes when the frame that shows it is painted. Only the stamp's own writes count: a
    // change among the live text's children (its placeholder giving way, the run ending) is no
    // delta, and read the newest stamp again long after it.
    support::click_text(&client, "[data-testid=conversation-item]", "Short one").await;
    client
        .execute(
            "window.__latencies = [];\
             new MutationObserver(records => {\
               for (const r of records) {\
                 if (r.type !== 'attributes') continue;\
                 const el = r.target;\
                 const at = Number(el.getAttribute && el.getAttribute('data-delta-at'));\
                 if (!at) continue;\
                 requestAnimationFrame(() => requestAnimationFrame(() =>\
                   window.__latencies.push(performance.timeOrigin + performance.now() - at)));\
               }\
             }).observe(document.body, {subtree: true, attributes: true, attributeFilter: ['data-delta-at'], childList: true});",
            vec![],
        )
        .await
        .unwrap();
    client
        .find(Locator::Css("[data-testid=composer-input]"))
        .await
        .unwrap()
        .send_keys("Say the parts")
        .await
        .unwrap();
    click(&client, "[data-testid=send]").await;
    wait_for_text(&client, "[data-testid=message]", &format!("part {DELTAS}")).await;
    let latencies = client
        .execute("return window.__latencies;", vec![])
        .await
        .unwrap();
    let mut latencies: Vec<f64> = latencies
        .as_array()
        .unwrap()
        .iter()
        .filter_map(serde_json::Value::as_f64)
        .collect();
    assert!(
        latencies.len() >= DELTAS / 2,
        "most deltas were seen on screen: {latencies:?}"
    );
    latencies.sort_by(f64::total_cmp);
    println!(
        "figure: token delta to the screen, {} deltas: median {:.1} ms, max {:.1} ms",
        latencies.len(),
        latencies[latencies.len() / 2],
        latencies[latencies.len() - 1]
    );
    client.close().await.unwrap();
    drop(driver);
}

/// How long, at 900x700, a hover, opening the folded sidebar and switching the conversation
/// take from their input to the end of the frame that shows them (a frame's callback, then a
/// task after its paint): within one frame is about 17 ms. Each is taken 15 times; the median
/// and the worst are printed.
async fn one_frame_figures(client: &fantoccini::Client) {
    client.set_window_size(900, 700).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Shown when the frame after `t0` has painted: a frame callback, then a task after it.
    const AFTER_PAINT: &str = "const painted = (t0, done) => requestAnimationFrame(() => {\
           const c = new MessageChannel(); c.port1.onmessage = () => done(performance.now() - t0);\
           c.port2.postMessage(0); });";
    let mut hover = Vec::new();
    let mut panel = Vec::new();
    let mut switch = Vec::new();
    for round in 0..15 {
        // The sidebar, folded at this width, opens from its toggle.
        let opened = client
            .execute_async(
                &format!(
                    "{AFTER_PAINT} const done = arguments[arguments.length - 1];\
                     const toggle = document.querySelector('[data-testid=sidebar-toggle]');\
                     const open = () => {{ const t0 = performance.now(); toggle.click(); painted(t0, done); }};\
                     if (toggle.getAttribute('aria-expanded') === 'true') {{\
                       toggle.click(); requestAnimationFrame(() => setTimeout(open, 100));\
                     }} else open();"
                ),
                vec![],
            )
            .await
            .unwrap();
        panel.push(opened.as_f64().unwrap());
        // A real pointer over a conversation: the page notes the event, then the frame.
        client
            .execute(
                &format!(
                    "{AFTER_PAINT} window.__hover = null;\
                     const items = document.querySelectorAll('[data-testid=conversation-item]');\
                     const item = items[arguments[0] % items.length];\
                     item.addEventListener('pointerover', (e) => painted(e.timeStamp, (ms) => {{ window.__hover = ms; }}), {{once: true}});\
                     item.setAttribute('data-hover-target', '1');"
                ),
                vec![serde_json::json!(round)],
            )
            .await
            .unwrap();
        let target = client
            .find(Locator::Css("[data-hover-target='1']"))
            .await
            .unwrap();
        let away = client
            .find(Locator::Css(
                "[data-testid=composer-input], [data-testid=conversation-title]",
            ))
            .await
            .unwrap();
        use fantoccini::actions::{InputSource, MouseActions, PointerAction};
        let mouse = MouseActions::new("mouse".into())
            .then(PointerAction::MoveToElement {
                element: away,
                duration: None,
                x: 0.0,
                y: 0.0,
            })
            .then(PointerAction::MoveToElement {
                element: target,
                duration: None,
                x: 0.0,
                y: 0.0,
            });
        client.perform_actions(mouse).await.unwrap();
        tokio::time::sleep(Duration::from_millis(150)).await;
        let hovered = client
            .execute(
                "document.querySelector('[data-hover-target]')?.removeAttribute('data-hover-target');\
                 return window.__hover;",
                vec![],
            )
            .await
            .unwrap();
        if let Some(ms) = hovered.as_f64() {
            hover.push(ms);
        }
        // Switching: from the click on another conversation to the frame showing its title.
        let switched = client
            .execute_async(
                &format!(
                    "{AFTER_PAINT} const done = arguments[arguments.length - 1];\
                     const names = ['Short one', 'Markdown and tools'];\
                     const name = names[arguments[0] % 2];\
                     const item = [...document.querySelectorAll('[data-testid=conversation-item]')]\
                       .find(e => e.textContent.includes(name));\
                     const t0 = performance.now();\
                     item.querySelector('[data-testid=conversation-title-button]').click();\
                     const poll = () => {{\
                       const title = document.querySelector('[data-testid=conversation-title]');\
                       if (title && title.textContent.includes(name)) painted(t0, done);\
                       else if (performance.now() - t0 > 5000) done(null);\
                       else requestAnimationFrame(poll);\
                     }};\
                     poll();"
                ),
                vec![serde_json::json!(round)],
            )
            .await
            .unwrap();
        switch.push(switched.as_f64().expect("the conversation opened"));
    }
    for (what, mut took) in [
        ("hover a conversation", hover),
        ("open the sidebar", panel),
        ("switch the conversation", switch),
    ] {
        assert!(!took.is_empty(), "{what}: nothing measured");
        took.sort_by(f64::total_cmp);
        println!(
            "figure: at 900x700, {what} to its painted frame ({} times): median {:.1} ms, max {:.1} ms",
            took.len(),
            took[took.len() / 2],
            took[took.len() - 1]
        );
    }
    client.set_window_size(1280, 800).await.unwrap();
}

/// Scrolls the open conversation up as a reader does (a wheel event, then the scroll it makes):
/// first still (the baseline frame), then at a mouse wheel's pace (100 px a frame), then a fling (half a screen a frame) that reads earlier pages on the
/// way. Prints what each frame took, and checks that the rows in the DOM stay few however much
/// is loaded.
async fn scroll_and_report(client: &fantoccini::Client, what: &str) {
    let scrolled = client
        .execute_async(
            "const done = arguments[arguments.length - 1];\
             const el = document.querySelector('[data-testid=message-scroll]');\
             const phases = [['still', 60, () => 0], ['wheel', 120, () => 100],\
                             ['fling', 240, () => el.clientHeight / 2]];\
             const out = {}; let most = 0; let p = 0; let n = 0; let last = performance.now();\
             const step = () => {\
               const now = performance.now(); const [name, frames, by] = phases[p];\
               (out[name] ??= []).push(now - last); last = now;\
               most = Math.max(most, document.querySelectorAll('[data-testid=message]').length);\
               el.dispatchEvent(new WheelEvent('wheel', {deltaY: -by(), bubbles: true}));\
               el.scrollTop = Math.max(0, el.scrollTop - by());\
               if (++n >= frames) { n = 0; p += 1; }\
               if (p < phases.length) { requestAnimationFrame(step); return; }\
               const list = document.querySelector('[data-testid=message-list]');\
               done({...out, most, loaded: Number(list.dataset.count)});\
             };\
             requestAnimationFrame(step);",
            vec![],
        )
        .await
        .unwrap();
    let most = scrolled["most"].as_u64().unwrap();
    let loaded = scrolled["loaded"].as_u64().unwrap();
    assert!(
        loaded > 400,
        "scrolling up read earlier pages: {loaded} loaded"
    );
    assert!(
        most < 100,
        "the DOM stays small while {loaded} messages are loaded: {most} rows"
    );
    for phase in ["still", "wheel", "fling"] {
        let mut frames: Vec<f64> = scrolled[phase]
            .as_array()
            .unwrap()
            .iter()
            .skip(1)
            .filter_map(serde_json::Value::as_f64)
            .collect();
        frames.sort_by(f64::total_cmp);
        println!(
            "figure: frame time ({what}), {phase} ({} frames): median {:.1} ms, p95 {:.1} ms, max {:.1} ms",
            frames.len(),
            frames[frames.len() / 2],
            frames[frames.len() * 95 / 100],
            frames[frames.len() - 1],
        );
    }
    println!(
        "figure: after scrolling ({what}), {loaded} messages loaded and at most {most} rows in the DOM"
    );
}

/// An analyst's conversation as it looks on screen: assistant answers in markdown (tables,
/// code, lists, emphasis, links), tool calls, and tool results short and long.
fn mixed_messages(count: usize) -> Vec<NewMessage> {
    (1..=count)
        .map(|i| {
            let region = i % 97;
            match i % 4 {
                1 => NewMessage::new(
                    Role::User,
                    format!("Step {i}: compare region R-{region} with last year."),
                ),
                2 => NewMessage::new(Role::Assistant, markdown_answer(i, region)),
                3 => NewMessage {
                    tool_calls: vec![decima_core::ToolCall {
                        id: format!("call_{i}"),
                        name: "shell".into(),
                        arguments: serde_json::json!({
                            "command": format!("duckdb -c \"select count(*) from ledger where region = 'R-{region}'\"")
                        })
                        .to_string(),
                        signature: None,
                    }],
                    ..NewMessage::new(Role::Assistant, "")
                },
                _ => NewMessage {
                    name: Some("shell".into()),
                    tool_call_id: Some(format!("call_{}", i - 1)),
                    ..NewMessage::new(Role::Tool, tool_output(i))
                },
            }
        })
        .collect()
}

fn markdown_answer(i: usize, region: usize) -> String {
    match (i / 4) % 3 {
        0 => format!(
            "Totals for **R-{region}**:\n\n| month | 2025 | 2026 |\n| --- | ---: | ---: |\n\
             | Jan | 1,204 | 1,310 |\n| Feb | 1,190 | 1,275 |\n| Mar | 1,402 | 1,198 |\n\n\
             March is *down 14.5%*; see `ledger_q1.csv`."
        ),
        1 => format!(
            "The query I ran:\n\n```sql\nselect region, sum(amount) as total\n\
             from ledger where region = 'R-{region}'\ngroup by region;\n```\n\n\
             It returns one row per region."
        ),
        _ => "Next:\n\n- check the **duplicates** in batch 9690\n- re-run the join without \
              `customer_id` nulls\n- compare with [the March report](https://example.org/march)"
            .to_owned(),
    }
}

fn tool_output(i: usize) -> String {
    if i.is_multiple_of(8) {
        (1..=40)
            .map(|r| format!("R-{r},{},{}", r * 31, r * 17))
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        format!("exit_code=0\n{}", i * 7)
    }
}
