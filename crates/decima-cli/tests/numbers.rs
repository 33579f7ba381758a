//! `decima execution numbers`, `decima numbers` and the Markdown export's footnotes: every
//! figure of an answer traced to the tool output that holds it, derived from such figures, or
//! shown unlinked in its sentence.

use decima_core::Role;
use serde_json::{Value, json};

use crate::common::{Env, execution_id, text};

/// A CSV printed by a command both `sh` and `cmd.exe` run (the Windows tests run these too).
const PRINT_SALES: &str =
    "echo region,revenue,cost && echo North,1234567,800000 && echo South,2345678,1500000";

/// A run that prints a CSV with a tool, then answers with figures of every kind: one as
/// written, one rescaled, a sum, a ratio and one that no output holds.
async fn run_with_figures(env: &Env) -> (String, Value) {
    env.call("shell", json!({ "command": PRINT_SALES }));
    env.say(
        "North brought in $1.23M and South 2,345,678, 3,580,245 together. \
         North's costs were 64.8% of its revenue of 1,234,567. West made 987,654 in 2024.",
    );
    let out = env.run(&[], "Summarise sales.csv").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let id = execution_id(&out.stderr);
    let view = env.show(&id).await;
    (id, view)
}

fn figure<'a>(report: &'a Value, written: &str) -> &'a Value {
    report["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["text"] == written)
        .unwrap_or_else(|| panic!("{written} not among {report:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_figure_of_a_runs_answer_is_linked_derived_or_unlinked() {
    let env = Env::new().await;
    let (id, view) = run_with_figures(&env).await;
    let messages = env.messages(&view).await;
    let output = messages.iter().find(|m| m.role == Role::Tool).unwrap();

    let out = env.decima(&["execution", "numbers", &id, "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();

    let rescaled = figure(&report, "$1.23M");
    assert_eq!(rescaled["status"], "linked");
    let source = &rescaled["source"];
    assert_eq!(source["message_seq"], output.seq);
    assert_eq!(
        source["tool_call_id"],
        output.tool_call_id.as_deref().unwrap()
    );
    let (start, end) = (
        source["start"].as_u64().unwrap() as usize,
        source["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(&output.content[start..end], "1234567");
    assert_eq!(source["subject"], "revenue · North");

    assert_eq!(figure(&report, "2,345,678")["status"], "linked");
    let sum = figure(&report, "3,580,245");
    assert_eq!(sum["status"], "derived", "{sum:#}");
    assert_eq!(sum["derivation"]["operation"], "sum");
    assert_eq!(sum["derivation"]["operands"].as_array().unwrap().len(), 2);
    let ratio = figure(&report, "64.8%");
    assert_eq!(ratio["status"], "derived", "{ratio:#}");
    assert_eq!(ratio["derivation"]["operation"], "ratio");

    let made_up = figure(&report, "987,654");
    assert_eq!(made_up["status"], "unlinked");
    assert!(made_up["source"].is_null());
    assert_eq!(made_up["sentence"], "West made 987,654 in 2024.");
    // The year is not a claim.
    assert!(
        report["figures"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["text"] != "2024")
    );

    // The table says the same to a person, the unlinked figure in its sentence.
    let out = env.decima(&["execution", "numbers", &id]).await;
    let table = text(&out.stdout);
    assert!(table.contains("1 unlinked"), "{table}");
    assert!(table.contains("in: West made 987,654 in 2024."), "{table}");
    assert!(table.contains(&format!("seq {}", output.seq)), "{table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_answer_is_checked_on_demand_and_a_message_that_is_no_answer_is_refused() {
    let env = Env::new().await;
    let (_, view) = run_with_figures(&env).await;
    let conversation = view["conversation_id"].as_str().unwrap();
    let messages = env.messages(&view).await;
    let answer = messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .unwrap();

    let seq = answer.seq.to_string();
    let out = env
        .decima(&["numbers", conversation, "--message", &seq, "--json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["message_seq"], answer.seq);
    assert_eq!(figure(&report, "987,654")["status"], "unlinked");

    let user = messages
        .iter()
        .find(|m| m.role == Role::User)
        .unwrap()
        .seq
        .to_string();
    let out = env
        .decima(&["numbers", conversation, "--message", &user])
        .await;
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("figures are checked in the assistant's answers"),
        "{}",
        text(&out.stderr)
    );
    let out = env
        .decima(&["numbers", conversation, "--message", "9999"])
        .await;
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("has no live message 9999"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_markdown_export_gives_each_figure_a_footnote_with_its_source() {
    let env = Env::new().await;
    let (_, view) = run_with_figures(&env).await;
    let conversation = view["conversation_id"].as_str().unwrap();
    let messages = env.messages(&view).await;
    let output = messages.iter().find(|m| m.role == Role::Tool).unwrap();
    let answer = messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .unwrap();

    let out = env
        .decima(&["export", conversation, "--format", "md"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let md = text(&out.stdout);
    let seq = answer.seq;
    assert!(md.contains(&format!("$1.23M[^f{seq}-1]")), "{md}");
    assert!(
        md.contains(&format!(
            "[^f{seq}-1]: $1.23M — linked: message #{} (tool call `{}`), \"1234567\", revenue · North",
            output.seq,
            output.tool_call_id.as_deref().unwrap()
        )),
        "{md}"
    );
    assert!(
        md.contains("derived (sum): 1234567 + 2345678 = 3580245"),
        "{md}"
    );
    assert!(
        md.contains("987,654 — unlinked: no tool output before it holds this value"),
        "{md}"
    );
    // The text export stays as it was: no marks.
    let out = env
        .decima(&["export", conversation, "--format", "text"])
        .await;
    assert!(!text(&out.stdout).contains("[^f"));
}

/// The run with `--figures on` stops on the unlinked figure (exit 6, as any failure with
/// `--on-failure stop`), the failure lists it in its sentence, and each choice settles it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unlinked_figure_stops_the_run_until_the_analyst_settles_it() {
    let env = Env::new().await;
    env.call("shell", json!({ "command": PRINT_SALES }));
    let answer = "North brought in 1,234,567. West made 987,654 and East 55,555.";
    env.say(answer);
    let out = env
        .run(
            &["--figures", "on", "--on-failure", "stop"],
            "Summarise sales.csv",
        )
        .await;
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let id = execution_id(&out.stderr);
    let view = env.show(&id).await;
    assert_eq!(view["status"], "awaiting_user", "{view:#}");
    let failure = view["failures"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(failure["class"], "unlinked", "{failure:#}");
    let listed: Vec<&str> = failure["details"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["text"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["987,654", "55,555"], "{failure:#}");
    assert_eq!(
        failure["details"]["figures"][0]["sentence"],
        "West made 987,654 and East 55,555."
    );
    let offered: Vec<&str> = failure["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(
        offered,
        ["verify", "estimate", "correct", "accept", "abort"]
    );

    // A correction without a value, or of a figure the failure does not list, changes nothing.
    let out = env
        .decima(&["recover", &id, "--choice", "correct", "--figure", "2"])
        .await;
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("needs the right value"),
        "{}",
        text(&out.stderr)
    );
    let out = env
        .decima(&["recover", &id, "--choice", "accept", "--figure", "3"])
        .await;
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("lists 2 figures: 3 is not one of them"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(env.show(&id).await["status"], "awaiting_user");

    // The first figure is an estimate; the run waits on the second, which is corrected.
    let out = env
        .decima(&["recover", &id, "--choice", "estimate", "--figure", "1"])
        .await;
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let out = env
        .decima(&["recover", &id, "--choice", "correct", "--value", "55,600"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let settled = "North brought in 1,234,567. West made 987,654 (estimate) and East 55,600.";
    assert_eq!(text(&out.stdout), format!("{settled}\n"));
    let view = env.show(&id).await;
    assert_eq!(view["status"], "succeeded");
    assert_eq!(view["result"], settled);

    // The settled answer is the run's last message; its figures say what the analyst decided.
    let out = env.decima(&["execution", "numbers", &id, "--json"]).await;
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(figure(&report, "1,234,567")["status"], "linked");
    assert_eq!(figure(&report, "987,654")["status"], "estimate");
    assert_eq!(figure(&report, "55,600")["status"], "corrected");
}

/// Verify sends the agent back to compute the figure with a tool; the new answer is matched
/// again and the run ends when its figures are linked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_asks_the_agent_to_compute_the_figure_and_matches_the_new_answer() {
    let env = Env::new().await;
    env.call("shell", json!({ "command": "echo rows: 120" }));
    env.say("There are 120 rows and a mean of 4.75.");
    let out = env
        .run(
            &["--figures", "on", "--on-failure", "stop"],
            "Describe the data",
        )
        .await;
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let id = execution_id(&out.stderr);

    env.call("shell", json!({ "command": "echo mean: 4.75" }));
    env.say("There are 120 rows and a mean of 4.75.");
    let out = env.decima(&["recover", &id, "--choice", "verify"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The model was asked to compute the figure, in the request after the choice.
    let asked = (0..env.server.requests().len())
        .map(|i| env.request_text(i))
        .any(|r| r.contains("Figures to verify") && r.contains("4.75 in: There are 120 rows"));
    assert!(asked);
    let view = env.show(&id).await;
    assert_eq!(view["status"], "succeeded");
    let out = env.decima(&["execution", "numbers", &id, "--json"]).await;
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(figure(&report, "4.75")["status"], "linked");
}

/// A file a command wrote is a source; a report the model wrote is checked as the answer is;
/// one in a format the matcher does not read says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_the_run_wrote_are_sources_or_reports_checked_like_the_answer() {
    let env = Env::new().await;
    env.call(
        "shell",
        json!({ "command": "echo region,total>totals.csv && echo North,4321 >>totals.csv" }),
    );
    env.call(
        "write_file",
        json!({"path": "report.md", "content": "# Totals\n\nNorth totalled 4,321 and South 999.\n"}),
    );
    env.call(
        "write_file",
        json!({"path": "summary.xlsx", "content": "not really a workbook"}),
    );
    env.say("North totalled 4,321.");
    // The figure check is on: the answer's figure is in the file the command wrote, but the
    // report's "999" is in nothing the run saw, and the run stops on it as on the answer's own.
    let out = env
        .run(
            &["--figures", "on", "--on-failure", "stop"],
            "Total the regions",
        )
        .await;
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let id = execution_id(&out.stderr);
    let view = env.show(&id).await;
    let failure = view["failures"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(failure["class"], "unlinked", "{failure:#}");
    let listed = failure["details"]["figures"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{failure:#}");
    assert_eq!(listed[0]["text"], "999");
    assert_eq!(listed[0]["path"], "report.md");
    assert_eq!(listed[0]["sentence"], "North totalled 4,321 and South 999.");
    assert!(
        failure["message"]
            .as_str()
            .unwrap()
            .contains("figure of the answer and its reports is in no tool output"),
        "{failure:#}"
    );
    // Marked as an estimate, the report says so beside it, and the run ends with its answer.
    let out = env.decima(&["recover", &id, "--choice", "estimate"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(env.ws().join("report.md")).unwrap(),
        "# Totals\n\nNorth totalled 4,321 and South 999 (estimate).\n"
    );
    assert_eq!(env.show(&id).await["status"], "succeeded");

    let out = env.decima(&["execution", "numbers", &id, "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let total = figure(&report, "4,321");
    assert_eq!(total["status"], "linked", "{report:#}");
    assert_eq!(total["source"]["path"], "totals.csv");
    assert_eq!(total["source"]["text"], "4321");
    assert_eq!(total["source"]["subject"], "total · North");

    let reports = report["reports"].as_array().unwrap();
    let md = reports.iter().find(|r| r["path"] == "report.md").unwrap();
    assert_eq!(figure(md, "4,321")["status"], "linked");
    assert_eq!(figure(md, "999")["status"], "estimate");
    assert_eq!(
        figure(md, "999")["sentence"],
        "North totalled 4,321 and South 999 (estimate)."
    );
    let xlsx = reports
        .iter()
        .find(|r| r["path"] == "summary.xlsx")
        .unwrap();
    assert!(xlsx["figures"].as_array().unwrap().is_empty());
    assert!(
        xlsx["note"].as_str().unwrap().contains("not .xlsx"),
        "{xlsx:#}"
    );

    // The answer on its own (what the window asks) says the same as the run's report.
    let view = env.show(&id).await;
    let conversation = view["conversation_id"].as_str().unwrap();
    let seq = report["message_seq"].to_string();
    let out = env
        .decima(&["numbers", conversation, "--message", &seq, "--json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let alone: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(figure(&alone, "4,321")["source"]["path"], "totals.csv");
    let out = env.decima(&["execution", "numbers", &id]).await;
    let table = text(&out.stdout);
    assert!(
        table.contains(
            "report report.md (written by the run): 2 figures, 1 linked, 0 derived, 0 unlinked, 1 settled by the analyst"
        ),
        "{table}"
    );
    assert!(table.contains("file totals.csv (written by"), "{table}");
    assert!(table.contains("report summary.xlsx"), "{table}");
}

/// A workbook of one sheet, as a spreadsheet program writes one: its cells inline, uncompressed.
fn workbook(rows: &[&[&str]]) -> Vec<u8> {
    use std::io::Write as _;
    let cell = |r: usize, c: usize, v: &str| {
        let at = format!("{}{}", char::from(b'A' + u8::try_from(c).unwrap()), r + 1);
        if v.parse::<f64>().is_ok() {
            format!("<c r=\"{at}\"><v>{v}</v></c>")
        } else {
            format!("<c r=\"{at}\" t=\"inlineStr\"><is><t>{v}</t></is></c>")
        }
    };
    let sheet_rows: String = rows
        .iter()
        .enumerate()
        .map(|(r, row)| {
            let cells: String = row.iter().enumerate().map(|(c, v)| cell(r, c, v)).collect();
            format!("<row r=\"{}\">{cells}</row>", r + 1)
        })
        .collect();
    let files = [
        (
            "[Content_Types].xml",
            "<?xml version=\"1.0\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">\
             <Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>\
             <Default Extension=\"xml\" ContentType=\"application/xml\"/>\
             <Override PartName=\"/xl/workbook.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/>\
             <Override PartName=\"/xl/worksheets/sheet1.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml\"/></Types>"
                .to_owned(),
        ),
        (
            "_rels/.rels",
            "<?xml version=\"1.0\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
             <Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"xl/workbook.xml\"/></Relationships>"
                .to_owned(),
        ),
        (
            "xl/workbook.xml",
            "<?xml version=\"1.0\"?><workbook xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" \
             xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\">\
             <sheets><sheet name=\"Quarters\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>"
                .to_owned(),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            "<?xml version=\"1.0\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
             <Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet\" Target=\"worksheets/sheet1.xml\"/></Relationships>"
                .to_owned(),
        ),
        (
            "xl/worksheets/sheet1.xml",
            format!(
                "<?xml version=\"1.0\"?><worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\">\
                 <sheetData>{sheet_rows}</sheetData></worksheet>"
            ),
        ),
    ];
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, body) in files {
        zip.start_file(name, options).unwrap();
        zip.write_all(body.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// The files the run started with are sources too, a workbook's cells among them, read as they
/// were when it started; a figure none of them holds is still flagged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inputs_a_run_started_with_and_their_workbooks_are_sources() {
    let env = Env::new().await;
    std::fs::create_dir_all(env.ws().join("inputs")).unwrap();
    std::fs::write(
        env.ws().join("inputs/sales.xlsx"),
        workbook(&[
            &["quarter", "revenue"],
            &["Q2", "3456789"],
            &["Q3", "4567890"],
        ]),
    )
    .unwrap();
    std::fs::write(
        env.ws().join("inputs/notes.txt"),
        "Headcount at year end: 321\n",
    )
    .unwrap();
    // The command reads the workbook; which files a command reads cannot be seen from outside
    // it, and every input is a source.
    env.call("shell", json!({ "command": "echo read the workbook" }));
    env.say("Q3 revenue was 4,567,890 against 3,456,789 in Q2, with a headcount of 321.");
    let out = env.run(&["--figures", "on"], "Compare the quarters").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let id = execution_id(&out.stderr);
    // Changed after the run: the check reads the inputs as they were when it started.
    std::fs::write(
        env.ws().join("inputs/notes.txt"),
        "Headcount at year end: 999\n",
    )
    .unwrap();

    let out = env.decima(&["execution", "numbers", &id, "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let q3 = figure(&report, "4,567,890");
    assert_eq!(q3["status"], "linked", "{report:#}");
    assert_eq!(q3["source"]["path"], "inputs/sales.xlsx");
    assert_eq!(q3["source"]["tool_call_id"], Value::Null);
    assert_eq!(q3["source"]["subject"], "revenue · Q3");
    let headcount = figure(&report, "321");
    assert_eq!(headcount["status"], "linked", "{report:#}");
    assert_eq!(headcount["source"]["path"], "inputs/notes.txt");
    let out = env.decima(&["execution", "numbers", &id]).await;
    let table = text(&out.stdout);
    assert!(
        table.contains("input file inputs/sales.xlsx (as the run started"),
        "{table}"
    );

    // The export's footnotes name the input too.
    let view = env.show(&id).await;
    let conversation = view["conversation_id"].as_str().unwrap();
    let out = env
        .decima(&["export", conversation, "--format", "md"])
        .await;
    let md = text(&out.stdout);
    assert!(
        md.contains("linked: input file `inputs/sales.xlsx` as the run started, \"4567890\""),
        "{md}"
    );

    // An answer whose figure differs by a digit from the workbook's is still flagged.
    env.call("shell", json!({ "command": "echo again" }));
    env.say("Q3 revenue was 4,567,980.");
    let out = env
        .run(
            &["--figures", "on", "--on-failure", "stop"],
            "And Q3 alone?",
        )
        .await;
    assert_ne!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("4,567,980"),
        "{}",
        text(&out.stderr)
    );
}

/// A compression summarises what the model sees and removes no message: the ledger is read
/// from the stored outputs, so every figure keeps its source and subject after one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn figures_keep_their_sources_and_subjects_through_a_compression() {
    let env = Env::new().await;
    let (id, view) = run_with_figures(&env).await;
    let conversation = view["conversation_id"].as_str().unwrap();
    let before = env.decima(&["execution", "numbers", &id, "--json"]).await;
    assert!(before.status.success(), "{}", text(&before.stderr));
    // Later work in the conversation, so that the run with the figures is old enough to be
    // summarised, and a window small enough that it must be.
    for i in 0..3 {
        env.say(&format!(
            "Noted the plan for part {i}. {}",
            "The review continues. ".repeat(20)
        ));
        let out = env
            .run(
                &["--conversation", conversation],
                &format!("Note the plan for part {i}"),
            )
            .await;
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let mut compress = env.command(&[
        "compress",
        conversation,
        "--level",
        "deep",
        "--strategy",
        "extract",
        "--json",
    ]);
    compress.env("DECIMA_CONTEXT_WINDOW", "2000");
    let out = tokio::task::spawn_blocking(move || compress.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let applied: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        applied["tokens_after"].as_u64().unwrap() < applied["tokens_before"].as_u64().unwrap(),
        "{applied:#}"
    );

    let after = env.decima(&["execution", "numbers", &id, "--json"]).await;
    assert!(after.status.success(), "{}", text(&after.stderr));
    let (before, after): (Value, Value) = (
        serde_json::from_slice(&before.stdout).unwrap(),
        serde_json::from_slice(&after.stdout).unwrap(),
    );
    assert_eq!(before["figures"], after["figures"]);
    assert_eq!(
        figure(&after, "$1.23M")["source"]["subject"],
        "revenue · North"
    );
}
