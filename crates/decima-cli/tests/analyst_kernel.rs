//! The `python` tool, the notebook export and reruns in the analyst's image, as
//! `scripts/test.sh` builds it, on the real engine with a scripted model: the kernel's
//! variables, charts, exceptions, timeouts and deaths; a rollback's realigned kernel; a session
//! exported as a notebook and run again with `jupyter nbconvert --execute`; a run replayed
//! without its model, and on new data.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, last_tool_result, text};
use serde_json::{Value, json};

/// The `python` tool: a kernel per conversation in the image, over Jupyter's protocol.
/// Variables persist from call to call (and a new process's run says its kernel is new); a chart comes
/// back as a file with the call; an exception comes back with its traceback; a cell past its
/// timeout is interrupted and the kernel keeps its variables; a kernel that dies is started
/// again and the model is told what is lost; the request lists what is in memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_kernel_keeps_an_analysts_data_between_calls_and_runs() {
    let env = Env::new().await;
    let (conversation, _cleanup) = common::analyst_conversation(&env, "kernel").await;
    env.call(
        "write_file",
        json!({"path": "sales.csv", "content": common::SALES_CSV}),
    );
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
    let (conversation, _cleanup) = common::analyst_conversation(&env, "kernel rollback").await;
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
    let (conversation, _cleanup) = common::analyst_conversation(&env, "notebook").await;
    env.call(
        "write_file",
        json!({"path": "sales.csv", "content": common::SALES_CSV}),
    );
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
    let (conversation, _cleanup) = common::analyst_conversation(&env, "rerun").await;
    let data_dir = std::path::absolute(env.data_dir()).unwrap();
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
