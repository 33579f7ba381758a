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

mod support;

use std::time::Duration;

use decima_core::{NewMessage, Role};
use decima_store::Store;
use decima_testkit::{LlmServer, Reply, StreamOptions, Turn};
use fantoccini::Locator;
use support::{Driver, app_pid, click, connect, wait_for_text};

const MESSAGES: usize = 100_000;
const DELTAS: usize = 20;

/// When a process started, in milliseconds since the epoch (10 ms resolution).
fn started_at_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let ticks: f64 = rest.split(' ').nth(19).unwrap().parse().unwrap();
    let boot: f64 = std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // USER_HZ is 100 on Linux.
    (boot + ticks / 100.0) * 1000.0
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
        store.close().await;
    }

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
               const last = document.querySelector('[data-testid=message][data-seq=\"100000\"]');\
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

    // Scrolling up through it: first still (the baseline frame), then at a mouse wheel's pace
    // (100 px a frame), then a fling (half a screen a frame) that reads earlier pages on the
    // way. What each frame took, and the rows in the DOM, which must stay few however much is
    // loaded.
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
            "figure: frame time, {phase} ({} frames): median {:.1} ms, p95 {:.1} ms, max {:.1} ms",
            frames.len(),
            frames[frames.len() / 2],
            frames[frames.len() * 95 / 100],
            frames[frames.len() - 1],
        );
    }
    println!(
        "figure: after scrolling, {loaded} messages loaded and at most {most} rows in the DOM"
    );

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
                   const e = document.querySelector(`[data-testid=message][data-seq=\"${seq}\"]`);\
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

    // A delta's way to the screen: Rust stamps each text delta as it forwards it; the page
    // notes when the frame that shows it is painted.
    support::click_text(&client, "[data-testid=conversation-item]", "Short one").await;
    client
        .execute(
            "window.__latencies = [];\
             new MutationObserver(records => {\
               for (const r of records) {\
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
