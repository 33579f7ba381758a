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
    let out = env
        .decima(&["conversation", "create", "--title", "analysis"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let conversation = text(&out.stdout).trim().to_owned();
    let data_dir = std::path::absolute(env.data_dir()).unwrap();
    let _cleanup = DockerCleanup(decima_sandbox::DockerEngine::instance_for_data_dir(
        &data_dir,
    ));
    let csv = "region,month,revenue\nEMEA,2026-01,1200\nEMEA,2026-02,1350\nAPAC,2026-01,800\n\
               APAC,2026-02,950\n";
    env.call("write_file", json!({"path": "sales.csv", "content": csv}));
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

/// The `python` tool: a kernel per conversation in the image, over Jupyter's protocol.
/// Variables persist from call to call (and a new process's run says its kernel is new); a chart comes
/// back as a file with the call; an exception comes back with its traceback; a cell past its
/// timeout is interrupted and the kernel keeps its variables; a kernel that dies is started
/// again and the model is told what is lost; the request lists what is in memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_kernel_keeps_an_analysts_data_between_calls_and_runs() {
    let env = Env::new().await;
    let out = env
        .decima(&["conversation", "create", "--title", "kernel"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let conversation = text(&out.stdout).trim().to_owned();
    let data_dir = std::path::absolute(env.data_dir()).unwrap();
    let _cleanup = DockerCleanup(decima_sandbox::DockerEngine::instance_for_data_dir(
        &data_dir,
    ));
    let csv = "region,month,revenue\nEMEA,2026-01,1200\nEMEA,2026-02,1350\nAPAC,2026-01,800\n\
               APAC,2026-02,950\n";
    env.call("write_file", json!({"path": "sales.csv", "content": csv}));
    env.call(
        "python",
        json!({"code": "import pandas as pd\ndf = pd.read_csv('sales.csv')\ndf.shape"}),
    );
    env.call(
        "python",
        json!({"code": "total = int(df.revenue.sum())\nprint('total', total)\n\
                        import matplotlib.pyplot as plt\n\
                        df.plot(x='month', y='revenue', title='营收')\nplt.show()"}),
    );
    env.call("python", json!({"code": "df['q4']"}));
    env.call(
        "python",
        json!({"code": "import time\ntime.sleep(120)", "timeout_s": 2}),
    );
    env.call("python", json!({"code": "total"}));
    env.say("Total revenue is 4300.");
    let out = env
        .run(
            &["--conversation", &conversation, "--sandbox", "docker"],
            "Analyse sales.csv in Python",
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));

    let loaded = last_tool_result(&env, 2);
    assert!(loaded.contains("Out: (4, 3)"), "{loaded}");
    assert!(
        loaded.starts_with("[a new kernel started"),
        "the first call starts the kernel: {loaded}"
    );
    let charted = last_tool_result(&env, 3);
    assert!(charted.contains("total 4300"), "{charted}");
    assert!(
        !charted.contains("a new kernel"),
        "the same kernel: {charted}"
    );
    assert!(
        charted.contains("[chart saved: charts/call_2-1.png]"),
        "{charted}"
    );
    assert!(
        charted.contains("image/png")
            && charted.contains("written by this call as charts/call_2-1.png"),
        "the chart is kept with the call: {charted}"
    );
    // What the kernel holds is in the request, after the history.
    let request = env.request_text(3);
    assert!(
        request.contains("Python kernel memory")
            && request.contains("df: pandas.DataFrame (4 × 3)"),
        "{request}"
    );
    assert!(request.contains("total: int"), "{request}");
    let failed = last_tool_result(&env, 4);
    assert!(failed.contains("KeyError"), "{failed}");
    assert!(
        failed.contains("df['q4']"),
        "the traceback names the line: {failed}"
    );
    assert!(!failed.contains("\u{1b}["), "no terminal colours: {failed}");
    let cut = last_tool_result(&env, 5);
    assert!(
        cut.contains("ran past its timeout and was interrupted"),
        "{cut}"
    );
    assert!(!cut.contains("every variable is gone"), "{cut}");
    let kept = last_tool_result(&env, 6);
    assert!(
        kept.contains("Out: 4300"),
        "interrupted, not restarted: {kept}"
    );
    let store = env.store().await;
    let messages = store
        .messages()
        .all(conversation.parse().unwrap())
        .await
        .unwrap();
    let key_error = messages
        .iter()
        .find(|m| m.role == decima_core::Role::Tool && m.content.contains("KeyError"))
        .unwrap();
    assert!(key_error.content.contains("Traceback") || key_error.content.contains("----> 1"));

    // A new process (each CLI command is one) starts the conversation's container afresh, so
    // its next run has a new kernel, and says so; in the window's process the kernel stays
    // from run to run (`docker_kernel` in decima-sandbox checks that). A kernel that dies is
    // started again, and the model is told that its variables are gone.
    env.call("python", json!({"code": "total * 2"}));
    env.call("python", json!({"code": "total = 8600"}));
    env.call("python", json!({"code": "import os\nos._exit(1)"}));
    env.call("python", json!({"code": "'total' in dir()"}));
    env.say("Done.");
    let before = env.server.requests().len();
    let out = env
        .run(
            &["--conversation", &conversation, "--sandbox", "docker"],
            "Double it",
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doubled = last_tool_result(&env, before + 1);
    assert!(
        doubled.starts_with("[a new kernel started for this call"),
        "{doubled}"
    );
    assert!(doubled.contains("NameError"), "{doubled}");
    let died = last_tool_result(&env, before + 3);
    assert!(died.contains("the kernel died"), "{died}");
    assert!(died.contains("every variable is gone"), "{died}");
    let gone = last_tool_result(&env, before + 4);
    assert!(gone.contains("Out: False"), "{gone}");
}

/// After a rollback the kernel matches the files: it is started again and the cells kept
/// (those before the snapshot) run again, so a variable a rolled-back cell set is gone and one
/// an earlier cell set is back as it was. The kernel is then asked in its container.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollback_restarts_the_kernel_and_runs_the_kept_cells_again() {
    let env = Env::new().await;
    let out = env
        .decima(&["conversation", "create", "--title", "kernel rollback"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let conversation = text(&out.stdout).trim().to_owned();
    let data_dir = std::path::absolute(env.data_dir()).unwrap();
    let _cleanup = DockerCleanup(decima_sandbox::DockerEngine::instance_for_data_dir(
        &data_dir,
    ));
    env.call(
        "python",
        json!({"code": "base = 1\nopen('base.txt', 'w').write('1')"}),
    );
    env.call(
        "todo_write",
        json!({"todos": [{"title": "adjust", "status": "in_progress"}]}),
    );
    env.call(
        "python",
        json!({"code": "base = 99\nextra = 5\nopen('base.txt', 'w').write('99')"}),
    );
    // The input it needs is not there: a data failure, which rolls back.
    env.call("read_file", json!({"path": "missing/input.csv"}));
    env.call(
        "todo_write",
        json!({"todos": [{"title": "adjust", "status": "failed", "reason": "the adjustment was wrong"}]}),
    );
    let out = env
        .run(
            &[
                "--conversation",
                &conversation,
                "--sandbox",
                "docker",
                "--on-failure",
                "stop",
            ],
            "Adjust the base",
        )
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    let id = common::execution_id(&out.stderr);
    let view = env.show(&id).await;
    let rolled = &view["failures"][0]["rolled_back"];
    assert_eq!(rolled["kernel_cells_rerun"], 1, "{view}");
    assert!(rolled["kernel_error"].is_null(), "{view}");

    // The conversation's kernel as the rollback left it, asked in its container (a new
    // decima process would start the container afresh) through the same bridge.
    let filter = format!("label=decima.instance={}", _cleanup.0);
    let ps = std::process::Command::new("docker")
        .args(["ps", "--format", "{{.Names}}", "--filter", &filter])
        .output()
        .unwrap();
    let container = text(&ps.stdout).trim().to_owned();
    assert!(
        !container.is_empty() && !container.contains('\n'),
        "{container:?}"
    );
    let bridge = include_str!("../../decima-sandbox/src/kernel/bridge.py");
    let ask = r#"echo '{"op": "execute", "id": 1, "code": "(base, \"extra\" in dir(), open(\"base.txt\").read())", "timeout": 30}' | python3 -c "$0" "$1""#;
    let out = std::process::Command::new("docker")
        .args([
            "exec",
            "-e",
            "DECIMA_KERNEL_DIR=/tmp/decima-kernel",
            "-e",
            "HOME=/workspace",
            &container,
            "sh",
            "-c",
            ask,
            bridge,
            &conversation,
        ])
        .output()
        .unwrap();
    let said = text(&out.stdout);
    assert!(
        said.contains(r#""attached": true"#),
        "the same kernel: {said}"
    );
    assert!(
        said.contains(r#""result": "(1, False, '1')""#),
        "the kept cell ran again, the rolled-back one did not: {said} {}",
        text(&out.stderr)
    );
}

/// Prints each code cell's outputs of an executed notebook, one line per output.
const PRINT_OUTPUTS: &str = r#"import json
nb = json.load(open('executed.ipynb'))
for c in nb['cells']:
    if c['cell_type'] != 'code':
        continue
    for o in c['outputs']:
        t = o.get('text') or o.get('data', {}).get('text/plain') or o.get('ename')
        print('OUT', c['metadata']['decima']['call_id'], (''.join(t) if isinstance(t, list) else t).strip())
"#;

/// A session exported as a notebook runs again in the image with `jupyter nbconvert
/// --execute`: its Python cells, its shell call as `%%bash`, the file it wrote as
/// `%%writefile`, past the cell that raised (tagged so), to the same values the run printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_exported_as_a_notebook_runs_again_in_the_image() {
    let env = Env::new().await;
    let out = env
        .decima(&["conversation", "create", "--title", "notebook"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let conversation = text(&out.stdout).trim().to_owned();
    let data_dir = std::path::absolute(env.data_dir()).unwrap();
    let _cleanup = DockerCleanup(decima_sandbox::DockerEngine::instance_for_data_dir(
        &data_dir,
    ));
    let csv = "region,month,revenue\nEMEA,2026-01,1200\nEMEA,2026-02,1350\nAPAC,2026-01,800\n\
               APAC,2026-02,950\n";
    env.call("write_file", json!({"path": "sales.csv", "content": csv}));
    env.call(
        "python",
        json!({"code": "import pandas as pd\ndf = pd.read_csv('/workspace/sales.csv')\n\
                        total = int(df.revenue.sum())\nprint('total', total)"}),
    );
    env.call("shell", json!({"command": "wc -l < sales.csv"}));
    env.call(
        "python",
        json!({"code": "df.groupby('region').revenue.sum().to_dict()"}),
    );
    env.call("python", json!({"code": "df['q4']"}));
    env.call("python", json!({"code": "int(df.revenue.mean())"}));
    env.say("Total revenue is 4300, EMEA 2550 and APAC 1750.");
    let out = env
        .run(
            &["--conversation", &conversation, "--sandbox", "docker"],
            "Sum the revenue in sales.csv",
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let recorded: Vec<String> = (2..=6).map(|i| last_tool_result(&env, i)).collect();
    assert!(recorded[0].contains("total 4300"), "{recorded:?}");
    assert!(
        recorded[3].contains("[the cell raised KeyError]"),
        "{recorded:?}"
    );

    let out = env
        .decima(&["export", &conversation, "--format", "ipynb"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let notebook_text = text(&out.stdout);
    let notebook: Value = serde_json::from_str(&notebook_text).unwrap();
    assert_eq!(notebook["nbformat"], 4);
    let cells = notebook["cells"].as_array().unwrap();
    let source = |c: &Value| {
        c["source"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect::<String>()
    };
    let code: Vec<String> = cells
        .iter()
        .filter(|c| c["cell_type"] == "code")
        .map(source)
        .collect();
    assert_eq!(code.len(), 6, "{code:#?}");
    assert!(
        code[0].starts_with("%%writefile sales.csv\nregion,month"),
        "{code:#?}"
    );
    assert!(
        code[1].contains("pd.read_csv('./sales.csv')"),
        "the path is made relative: {code:#?}"
    );
    assert_eq!(code[2], "%%bash\nwc -l < sales.csv");
    let raising = cells.iter().find(|c| source(c) == "df['q4']").unwrap();
    assert_eq!(raising["metadata"]["tags"], json!(["raises-exception"]));
    let markdown: Vec<String> = cells
        .iter()
        .filter(|c| c["cell_type"] == "markdown")
        .map(source)
        .collect();
    assert!(
        markdown
            .iter()
            .any(|m| m.starts_with("**Analyst:** Sum the revenue")),
        "{markdown:#?}"
    );
    let answer = markdown
        .iter()
        .find(|m| m.starts_with("Total revenue is 4300"))
        .unwrap();
    assert!(
        answer.contains("[^f"),
        "the figures are footnoted: {answer}"
    );

    // Run again in the image, from the workspace's folder.
    env.call(
        "write_file",
        json!({"path": "session.ipynb", "content": notebook_text}),
    );
    env.call(
        "write_file",
        json!({"path": "outputs.py", "content": PRINT_OUTPUTS}),
    );
    env.call(
        "shell",
        json!({"command": "export JUPYTER_RUNTIME_DIR=/tmp/nbrun; \
            jupyter nbconvert --to notebook --execute session.ipynb --output executed.ipynb 2>&1 | tail -3 \
            && python3 outputs.py"}),
    );
    env.say("It ran again.");
    let before = env.server.requests().len();
    let out = env
        .run(
            &["--conversation", &conversation, "--sandbox", "docker"],
            "Run the notebook",
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let executed = last_tool_result(&env, before + 3);
    assert!(executed.contains("[exit code 0]"), "{executed}");
    let printed = |call: &str| -> Vec<String> {
        executed
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("OUT {call} ")))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(printed("call_1"), ["total 4300"], "{executed}");
    assert_eq!(printed("call_2"), ["5"], "{executed}");
    assert_eq!(
        printed("call_3"),
        ["{'APAC': 1750, 'EMEA': 2550}"],
        "{executed}"
    );
    assert_eq!(printed("call_4"), ["KeyError"], "{executed}");
    assert_eq!(printed("call_5"), ["1075"], "{executed}");
    // The same values the run printed.
    assert!(recorded[1].contains('5') && recorded[2].contains("{'APAC': 1750, 'EMEA': 2550}"));
    assert!(recorded[4].contains("Out: 1075"), "{recorded:?}");
}

/// A finished run replayed without its model: every call of the same output is the same, a
/// clock's is nondeterministic, a chart is the same by its hash, and no request reaches a
/// model. On new data with one changed cell, exactly the figures that rest on it change (a
/// linked one and the sum derived from it); on data without a column the figures that needed
/// it are named with the call that failed. The conversation's own workspace is not touched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_replays_without_its_model_and_on_new_data_says_which_figures_changed() {
    let env = Env::new().await;
    let out = env
        .decima(&["conversation", "create", "--title", "rerun"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let conversation = text(&out.stdout).trim().to_owned();
    let data_dir = std::path::absolute(env.data_dir()).unwrap();
    let _cleanup = DockerCleanup(decima_sandbox::DockerEngine::instance_for_data_dir(
        &data_dir,
    ));
    let csv = "region,month,revenue,units\nEMEA,2026-01,1200,10\nEMEA,2026-02,1350,12\n\
               APAC,2026-01,800,8\nAPAC,2026-02,950,10\n";
    // The data is there before the run that analyses it: one of its inputs.
    env.call("write_file", json!({"path": "sales.csv", "content": csv}));
    env.say("Saved.");
    let docker = [
        "--conversation",
        conversation.as_str(),
        "--sandbox",
        "docker",
    ];
    let out = env.run(&docker, "Save the sales").await;
    assert!(out.status.success(), "{}", text(&out.stderr));

    env.call(
        "python",
        json!({"code": "import pandas as pd\ndf = pd.read_csv('sales.csv')\n\
                        totals = df.groupby('region').revenue.sum()\nprint(totals.to_csv())"}),
    );
    env.call(
        "shell",
        json!({"command": "python3 -c \"import pandas as pd; print('units:', int(pd.read_csv('sales.csv').units.sum()))\""}),
    );
    env.call(
        "python",
        json!({"code": "import time\nprint(time.time_ns())"}),
    );
    env.call(
        "python",
        json!({"code": "import matplotlib.pyplot as plt\ntotals.plot(kind='bar')\nplt.show()"}),
    );
    env.say("EMEA brought in 2550 and APAC 1750, 4300 in all; 40 units were sold.");
    let out = env.run(&docker, "Total the revenue by region").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let run = common::execution_id(&out.stderr);
    let requests = env.server.requests().len();

    let out = env.decima(&["rerun", &run, "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let verdicts: Vec<(&str, &str)> = report["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["tool"].as_str().unwrap(), c["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("python", "same"),
            ("shell", "same"),
            ("python", "nondeterministic"),
            ("python", "same"),
        ],
        "{report:#}"
    );
    assert_eq!(report["model_requests"], 0);
    assert_eq!(
        env.server.requests().len(),
        requests,
        "no request reached a model"
    );

    // New data: one cell changed.
    let changed = data_dir.join("q4.csv");
    std::fs::write(
        &changed,
        csv.replace("APAC,2026-01,800,8", "APAC,2026-01,900,8"),
    )
    .unwrap();
    let swap = format!("sales.csv={}", changed.display());
    let out = env
        .decima(&["rerun", &run, "--input", &swap, "--json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let moved: Vec<(&str, f64)> = report["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["text"].as_str().unwrap(), f["new"].as_f64().unwrap()))
        .collect();
    assert_eq!(moved, [("1750", 1850.0), ("4300", 4400.0)], "{report:#}");
    assert_eq!(report["unchanged"], 2, "2550 and 40 stay: {report:#}");
    assert_eq!(report["lost"], json!([]), "{report:#}");
    // The text says it too.
    let out = env.decima(&["rerun", &run, "--input", &swap]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("1750 -> 1850"), "{said}");
    assert!(said.contains("2 changed, 2 the same"), "{said}");

    // New data without the revenue column: the figures that needed it are named, with why.
    let broken = data_dir.join("broken.csv");
    std::fs::write(
        &broken,
        "region,month,units\nEMEA,2026-01,10\nAPAC,2026-01,8\n",
    )
    .unwrap();
    let swap = format!("sales.csv={}", broken.display());
    let out = env
        .decima(&["rerun", &run, "--input", &swap, "--json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let lost: Vec<&str> = report["lost"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["text"].as_str().unwrap())
        .collect();
    assert_eq!(lost, ["2550", "1750", "4300"], "{report:#}");
    let reason = report["lost"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("failed on the new data") && reason.contains("revenue"),
        "{reason}"
    );
    assert_eq!(report["changed"][0]["text"], "40", "{report:#}");

    // An input the run did not start with is refused, and names those it did.
    let swap = format!("other.csv={}", changed.display());
    let out = env.decima(&["rerun", &run, "--input", &swap]).await;
    assert!(!out.status.success());
    let said = text(&out.stderr);
    assert!(
        said.contains("other.csv is not one of the run's inputs") && said.contains("sales.csv"),
        "{said}"
    );

    // The conversation's workspace still holds the data the run had.
    env.call("shell", json!({"command": "cat sales.csv"}));
    env.say("Checked.");
    let before = env.server.requests().len();
    let out = env.run(&docker, "Show the data").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = last_tool_result(&env, before + 1);
    assert!(shown.contains("APAC,2026-01,800,8"), "{shown}");
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
