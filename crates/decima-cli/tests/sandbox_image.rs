//! The analyst's sandbox image, decima-sandbox:latest, as `scripts/test.sh` builds it with
//! `decima sandbox image build` from the recipe in `sandbox/` (once per machine: the image
//! carries its recipe's hash). Its status, then an agent run in it (scripted model, a
//! conversation with the default sandbox settings) that reads a CSV with pandas, saves a chart
//! with matplotlib and queries SQLite, and finds the user is not root, the network is off and
//! the limits hold: the tool results carry the real outputs.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{DockerCleanup, Env, last_tool_result, text};
use serde_json::{Value, json};

const IMAGE: &str = "decima-sandbox:latest";

#[tokio::test]
async fn the_built_image_reports_its_recipe_and_size() {
    let env = Env::new().await;
    let out = env.decima(&["sandbox", "image", "status", "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["image"], IMAGE);
    assert_eq!(
        status["present"], true,
        "scripts/test.sh builds it: {status}"
    );
    assert_eq!(status["current"], true, "{status}");
    assert_eq!(status["recipe"], status["wanted_recipe"]);
    assert!(
        status["size_bytes"].as_u64().unwrap() > 200_000_000,
        "{status}"
    );
    assert!(status["created"].as_str().unwrap().starts_with("20"));
    // A build of a current image does nothing, at once.
    let started = std::time::Instant::now();
    let out = env.decima(&["sandbox", "image", "build"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(
        text(&out.stdout).contains("the current one"),
        "{}",
        text(&out.stdout)
    );
}

#[tokio::test]
async fn a_build_that_fails_says_why_and_leaves_the_working_image_alone() {
    let env = Env::new().await;
    let status = |env: &Env| {
        let out = env
            .command(&["sandbox", "image", "status", "--json"])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let before = status(&env);
    assert_eq!(before["current"], true, "{before}");
    // A mirror nothing answers on: the package tool fails at its first download.
    let out = env
        .command(&["sandbox", "image", "build", "--force"])
        .env("DECIMA_DEBIAN_MIRROR", "http://127.0.0.1:9/debian")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = text(&out.stderr);
    assert!(said.contains("mmdebstrap failed"), "{said}");
    assert!(
        said.contains("127.0.0.1:9"),
        "the tool's own last lines: {said}"
    );
    let after = status(&env);
    assert_eq!(after["id"], before["id"], "the working image is untouched");
    assert_eq!(after["current"], true);
    let tags = std::process::Command::new("docker")
        .args(["images", "--format", "{{.Tag}}", "decima-sandbox"])
        .output()
        .unwrap();
    assert!(
        !text(&tags.stdout).contains("building-"),
        "no build tag is left: {}",
        text(&tags.stdout)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_does_an_analysts_work_in_the_image() {
    let env = Env::new().await;
    let (conversation, _cleanup) = common::analyst_conversation(&env, "analysis").await;
    env.call(
        "write_file",
        json!({"path": "sales.csv", "content": common::SALES_CSV}),
    );
    env.call(
        "shell",
        json!({"command": "python3 -c \"import pandas as pd; df = pd.read_csv('sales.csv'); \
                            print(df.groupby('region').revenue.sum().to_dict())\""}),
    );
    env.call(
        "shell",
        json!({"command": "python3 -c \"import pandas as pd, matplotlib.pyplot as plt; \
            df = pd.read_csv('sales.csv'); df.pivot(index='month', columns='region', \
            values='revenue').plot(title='营收 revenue'); plt.savefig('chart.png'); \
            print(open('chart.png', 'rb').read(8))\" && ls -l chart.png"}),
    );
    env.call(
        "shell",
        json!({"command": "sqlite3 sales.db \"create table s(region, revenue); \
            insert into s values ('EMEA', 1200), ('APAC', 800); \
            select region || '=' || sum(revenue) from s group by region order by region;\""}),
    );
    env.call(
        "shell",
        json!({"command": "id -u; python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), 3)\" \
            || echo network-off; \
            cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes; \
            cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max; \
            jq --version; csvlook --version; git --version; node --version; npm --version; npx --version; \
            fc-match 'WenQuanYi Micro Hei'; \
            cat /sys/fs/cgroup/cpu.max 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us"}),
    );
    // numpy, scipy and openpyxl at work (a workbook written and read back through pandas), and
    // the font matplotlib resolves for its default family: the one with Chinese glyphs.
    env.call(
        "shell",
        json!({"command": "python3 -c \"import numpy as np, scipy.stats as st, pandas as pd; \
            pd.DataFrame({'region': ['EMEA', 'APAC'], 'revenue': [2550, 1750]}).to_excel('q.xlsx', index=False); \
            back = pd.read_excel('q.xlsx'); \
            print('xlsx', back.revenue.sum(), 'mean', np.mean(back.revenue), 'p', st.ttest_1samp([1, 2, 3], 2).pvalue); \
            from matplotlib import font_manager as fm, rcParams; \
            print('font', fm.findfont(fm.FontProperties(family=rcParams['font.family']), fallback_to_default=False))\""}),
    );
    // The memory limit holds: a process that takes 1.5 GiB is killed.
    env.call(
        "shell",
        json!({"command": "python3 -c \"x = b'x' * (1536 * 1024 * 1024)\"; echo exit=$?"}),
    );
    env.say("EMEA earned more.");
    let out = env
        .run(
            &["--conversation", &conversation, "--sandbox", "docker"],
            "Analyse sales.csv",
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));

    let grouped = last_tool_result(&env, 2);
    assert!(
        grouped.contains("{'APAC': 1750, 'EMEA': 2550}"),
        "pandas read the CSV: {grouped}"
    );
    let chart = last_tool_result(&env, 3);
    assert!(
        chart.contains(r"b'\x89PNG\r\n\x1a\n'"),
        "matplotlib saved a PNG: {chart}"
    );
    assert!(
        !chart.contains("Glyph"),
        "the Chinese title had a font: {chart}"
    );
    // The chart is kept with the call's result, read from the container: its card shows it.
    assert!(
        chart.contains("image/png") && chart.contains("written by this call as chart.png"),
        "{chart}"
    );
    let query = last_tool_result(&env, 4);
    assert!(query.contains("APAC=800"), "{query}");
    assert!(query.contains("EMEA=1200"), "{query}");
    let checks = last_tool_result(&env, 5);
    let lines: Vec<&str> = checks.lines().collect();
    assert!(lines.contains(&"1000"), "not root: {checks}");
    assert!(checks.contains("network-off"), "no network: {checks}");
    assert!(
        lines.contains(&"1073741824"),
        "the 1 GiB memory limit: {checks}"
    );
    assert!(lines.contains(&"256"), "the process limit: {checks}");
    assert!(checks.contains("jq-1.6"), "{checks}");
    assert!(checks.contains("git version"), "{checks}");
    // npm and npx (the usual way MCP servers start) each print a bare version.
    let versions = lines
        .iter()
        .filter(|l| l.split('.').count() == 3 && l.split('.').all(|p| p.parse::<u32>().is_ok()))
        .count();
    assert!(versions >= 2, "npm and npx: {checks}");
    assert!(checks.contains("wqy-microhei"), "{checks}");
    assert!(
        lines.iter().any(|l| l.starts_with("100000")),
        "the one-CPU limit: {checks}"
    );
    let science = last_tool_result(&env, 6);
    assert!(science.contains("xlsx 4300 mean 2150.0 p 1.0"), "{science}");
    assert!(
        science.contains("font /usr/share/fonts/truetype/wqy/"),
        "charts draw Chinese with WenQuanYi: {science}"
    );
    let killed = last_tool_result(&env, 7);
    assert!(
        killed.contains("exit=137"),
        "killed at the memory limit: {killed}"
    );
}

/// A minimal MCP server over stdio in the image's Python: the handshake and one tool.
const PYTHON_SERVER: &str = r#"
import sys, json
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "py", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": [{"name": "add", "description": "Adds two numbers",
                        "inputSchema": {"type": "object",
                                        "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "unknown"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_docker_servers_tools_are_checked_in_a_container_made_for_it_and_removed() {
    let env = Env::new().await;
    let data_dir = std::path::absolute(env.data_dir()).unwrap();
    let cleanup = DockerCleanup(decima_sandbox::DockerEngine::instance_for_data_dir(
        &data_dir,
    ));
    env.mcp_add(&["calc", "--", "python3", "-c", PYTHON_SERVER])
        .await;
    let out = env.decima(&["mcp", "tools", "calc", "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["tools"][0]["name"], "add", "{listed}");
    assert!(listed["tokens"].as_u64().unwrap() > 10, "{listed}");
    let filter = format!("label=decima.instance={}", cleanup.0);
    let ps = std::process::Command::new("docker")
        .args(["ps", "-a", "--format", "{{.Names}}", "--filter", &filter])
        .output()
        .unwrap();
    assert_eq!(
        text(&ps.stdout).trim(),
        "",
        "the check's container was removed"
    );
    let volumes = std::process::Command::new("docker")
        .args(["volume", "ls", "-q", "--filter", &filter])
        .output()
        .unwrap();
    assert_eq!(text(&volumes.stdout).trim(), "", "and its volume");
}

/// Copies a folder tree (the reference servers, as npm installed them).
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let kind = entry.file_type().unwrap();
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &target).unwrap();
            #[cfg(windows)]
            std::fs::copy(entry.path(), &target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The reference MCP servers on the image's own Node.js, in the sandbox beside a run on the
/// host (the default place of a server, and the default sandbox of a run): the server sees the
/// run's folder as `/workspace`, so it reads what `write_file` wrote there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_servers_run_on_the_images_node_beside_a_host_run() {
    let env = Env::new().await;
    let data_dir = std::path::absolute(env.data_dir()).unwrap();
    let _cleanup = DockerCleanup(decima_sandbox::DockerEngine::instance_for_data_dir(
        &data_dir,
    ));
    let installed = decima_testkit::mcp_servers::reference_server("server-everything");
    let modules = installed
        .ancestors()
        .find(|p| p.ends_with("node_modules"))
        .unwrap()
        .to_path_buf();
    copy_tree(&modules, &env.ws().join("mcp/node_modules"));
    let in_sandbox = "/workspace/mcp/node_modules/@modelcontextprotocol";
    for (name, args) in [
        (
            "everything",
            vec![
                format!("{in_sandbox}/server-everything/dist/index.js"),
                "stdio".into(),
            ],
        ),
        (
            "files",
            vec![
                format!("{in_sandbox}/server-filesystem/dist/index.js"),
                "/workspace".into(),
            ],
        ),
    ] {
        let mut add = vec![name, "--", "node"];
        add.extend(args.iter().map(String::as_str));
        env.mcp_add(&add).await;
    }
    env.call(
        "mcp__everything__echo",
        json!({"message": "on the image's node"}),
    );
    env.call(
        "write_file",
        json!({"path": "q4.csv", "content": "region,revenue\nAPAC,870\n"}),
    );
    env.call(
        "mcp__files__read_text_file",
        json!({"path": "/workspace/q4.csv"}),
    );
    env.say("Done.");
    let out = env
        .run(&["--allow-tool", "mcp__*"], "Use the servers")
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(last_tool_result(&env, 1), "Echo: on the image's node");
    let read = last_tool_result(&env, 3);
    assert!(read.contains("APAC,870"), "{read}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn naming_another_image_says_which_tools_it_lacks() {
    let env = Env::new().await;
    let data_dir = std::path::absolute(env.data_dir()).unwrap();
    let cleanup = DockerCleanup(decima_sandbox::DockerEngine::instance_for_data_dir(
        &data_dir,
    ));
    let out = env
        .decima(&["conversation", "create", "--title", "images"])
        .await;
    let id = text(&out.stdout).trim().to_owned();
    let named = |image: &'static str| {
        let env = &env;
        let id = id.clone();
        async move {
            env.decima(&["conversation", "sandbox", &id, "--image", image])
                .await
        }
    };
    // The small busybox test image has a shell, and none of the analyst's tools.
    let out = named("decima-test:busybox").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains("lacks python3, sqlite3, jq, git, node, csvlook"),
        "{said}"
    );
    // The analyst's image has them all: nothing to say.
    let out = named(IMAGE).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr).trim(), "");
    // An image the engine does not have is stored (it may be built later), and said so.
    let out = named("decima-test:not-built").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.contains("could not be checked"), "{said}");
    assert!(said.contains("decima-test:not-built"), "{said}");
    let shown = env
        .decima(&["conversation", "sandbox", &id, "--json"])
        .await;
    let stored: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(stored["image"], "decima-test:not-built");
    // No container of the checks is left.
    let filter = format!("label=decima.instance={}", cleanup.0);
    let ps = std::process::Command::new("docker")
        .args(["ps", "-a", "--format", "{{.Names}}", "--filter", &filter])
        .output()
        .unwrap();
    assert_eq!(text(&ps.stdout).trim(), "");
}
