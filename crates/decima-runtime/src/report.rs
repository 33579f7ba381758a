//! A report of a conversation's newest answer, for someone who does not open Decima: the
//! question and the answer, the charts and CSVs the run that answered wrote in the workspace,
//! and its final review's findings. As a folder (`report.md` beside `charts/` and `data/`), or
//! as one self-contained HTML file (images and CSVs inside it, nothing fetched when opened).
//! The answer's Markdown is rendered with its raw HTML shown as text: a model's answer never
//! becomes markup or script in the analyst's browser.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use decima_core::{ConversationId, Role};
use decima_store::{Review, Store};

use crate::error::{Result, RuntimeError};
use crate::workspace::{self, Writer};

/// The largest chart put in a report; a larger one is named, not copied.
const MAX_CHART_BYTES: u64 = 20 * 1024 * 1024;
/// The largest CSV put in a report; a larger one is named, not copied.
const MAX_CSV_BYTES: u64 = 50 * 1024 * 1024;
/// Rows of each CSV shown as a table in the HTML report (the whole file is attached).
const SHOWN_ROWS: usize = 200;
/// Files of each kind in a report: a run that wrote thousands is summarised by count.
const MAX_FILES: usize = 50;

/// How a report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// A folder: `report.md`, `charts/`, `data/`.
    Folder,
    /// One HTML file with everything inside.
    Html,
}

/// What a report holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportOutcome {
    /// The folder or file written.
    pub path: PathBuf,
    /// Charts put in it.
    pub charts: usize,
    /// CSVs put in it.
    pub tables: usize,
    /// The review's findings listed.
    pub findings: usize,
    /// Files named but left out (too large, or past the count), with why.
    pub left_out: Vec<String>,
}

/// A file of the run, read for the report.
struct Attached {
    path: String,
    bytes: Vec<u8>,
}

/// What goes into the report, gathered before anything is written.
struct Contents {
    title: String,
    question: Option<String>,
    answer: String,
    charts: Vec<Attached>,
    tables: Vec<Attached>,
    review: Option<Review>,
    left_out: Vec<String>,
}

/// Writes the report of `conversation`'s newest answer to `to`: a folder that must not exist
/// yet (its parent must), or an HTML file (replaced whole, never left half-written).
#[tracing::instrument(skip(store, data_dir, to), fields(%conversation, ?format))]
pub async fn export_report(
    store: &Store,
    data_dir: &Path,
    conversation: ConversationId,
    format: ReportFormat,
    to: &Path,
) -> Result<ReportOutcome> {
    let contents = gather(store, data_dir, conversation).await?;
    let outcome = ReportOutcome {
        path: to.to_path_buf(),
        charts: contents.charts.len(),
        tables: contents.tables.len(),
        findings: contents.review.as_ref().map_or(0, |r| r.findings.len()),
        left_out: contents.left_out.clone(),
    };
    let to = to.to_path_buf();
    tokio::task::spawn_blocking(move || match format {
        ReportFormat::Folder => write_folder(&contents, &to),
        ReportFormat::Html => write_atomically(&to, html(&contents).as_bytes()),
    })
    .await
    .map_err(|e| RuntimeError::Config(format!("the report task failed: {e}")))??;
    tracing::info!(
        charts = outcome.charts,
        tables = outcome.tables,
        findings = outcome.findings,
        "report written"
    );
    Ok(outcome)
}

/// The newest answer, its question, the files its run wrote and its review.
async fn gather(store: &Store, data_dir: &Path, conversation: ConversationId) -> Result<Contents> {
    let title = store.conversations().get(conversation).await?.title;
    let messages = store.messages().all(conversation).await?;
    let Some(answer_at) = messages
        .iter()
        .rposition(|m| m.role == Role::Assistant && !m.content.trim().is_empty())
    else {
        return Err(RuntimeError::Conflict(
            "this conversation has no answer yet: a report holds an answer, so run a task first"
                .to_owned(),
        ));
    };
    let answer = messages[answer_at].content.clone();
    let asked = messages[..answer_at]
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map(|m| m.content.clone());
    // The run that answered: the newest of the conversation's own runs.
    let run = store
        .executions()
        .list_by_conversation(conversation)
        .await?
        .into_iter()
        .filter(|e| e.depth == 0)
        .max_by_key(|e| e.created_at.0);
    let review = match &run {
        Some(run) => store.reviews().list_for_execution(run.id).await?.pop(),
        None => None,
    };
    // The run's task is what the analyst typed (its stored message may also name the files
    // they added, for the agent).
    let question = run.as_ref().map(|r| r.task.clone()).or(asked);
    let mut contents = Contents {
        title,
        question,
        answer,
        charts: Vec::new(),
        tables: Vec::new(),
        review,
        left_out: Vec::new(),
    };
    let Some(run) = run else {
        return Ok(contents);
    };
    let place = workspace::place(store, data_dir, conversation).await?;
    let mut entries = workspace::entries(store, &place, conversation, false).await?;
    // Oldest first, as the run wrote them; its subagents' files count as its own.
    entries.reverse();
    for entry in entries {
        let Some(Writer::Call { at, .. }) = &entry.written_by else {
            continue;
        };
        if at.0 < run.created_at.0 {
            continue;
        }
        let (kind, max) = match extension(&entry.path).as_str() {
            "png" | "jpg" | "jpeg" | "svg" | "gif" | "webp" => {
                (&mut contents.charts, MAX_CHART_BYTES)
            }
            "csv" => (&mut contents.tables, MAX_CSV_BYTES),
            _ => continue,
        };
        if kind.len() >= MAX_FILES {
            contents.left_out.push(format!(
                "{} (more than {MAX_FILES} of its kind)",
                entry.path
            ));
            continue;
        }
        if entry.size > max {
            contents.left_out.push(format!(
                "{} ({} MB, more than a report holds; it is in the workspace)",
                entry.path,
                entry.size / (1024 * 1024)
            ));
            continue;
        }
        match place.sandbox.read_bytes(entry.path.clone(), max).await {
            Ok(bytes) => kind.push(Attached {
                path: entry.path,
                bytes,
            }),
            Err(e) => contents
                .left_out
                .push(format!("{} (could not be read: {})", entry.path, e.message)),
        }
    }
    Ok(contents)
}

/// `report.md`, `charts/…` and `data/…` in a new folder `to`.
fn write_folder(contents: &Contents, to: &Path) -> Result<()> {
    let io = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| RuntimeError::Io {
            action,
            path,
            source,
        }
    };
    std::fs::create_dir(to).map_err(io("create", to))?;
    let mut md = String::new();
    let _ = writeln!(md, "# {}\n", contents.title);
    if let Some(question) = &contents.question {
        let _ = writeln!(md, "## The question\n\n{}\n", question.trim());
    }
    let _ = writeln!(md, "## The answer\n\n{}\n", contents.answer.trim());
    for (folder, files, heading) in [
        ("charts", &contents.charts, "Charts"),
        ("data", &contents.tables, "Data"),
    ] {
        if files.is_empty() {
            continue;
        }
        let dir = to.join(folder);
        let _ = writeln!(md, "## {heading}\n");
        for file in files {
            let name = flat_name(&file.path);
            let target = dir.join(&name);
            std::fs::create_dir_all(&dir).map_err(io("create", &dir))?;
            std::fs::write(&target, &file.bytes).map_err(io("write", &target))?;
            let link = format!("{folder}/{}", name.replace(' ', "%20"));
            if folder == "charts" {
                let _ = writeln!(md, "![{}]({link})\n", file.path);
            } else {
                let _ = writeln!(md, "- [{}]({link})", file.path);
            }
        }
        md.push('\n');
    }
    if let Some(review) = &contents.review {
        md.push_str(&review_markdown(review));
    }
    if !contents.left_out.is_empty() {
        let _ = writeln!(md, "## Left out\n");
        for line in &contents.left_out {
            let _ = writeln!(md, "- {line}");
        }
    }
    let report = to.join("report.md");
    std::fs::write(&report, md).map_err(io("write", &report))
}

/// The review as the Markdown report shows it.
fn review_markdown(review: &Review) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## The tenth man's review: risk {}\n\n{}\n",
        review.risk_level,
        review.summary.trim()
    );
    for finding in &review.findings {
        let f = &finding.body;
        let _ = writeln!(
            md,
            "### {} ({})\n\n{}\n\n**Recommendation:** {}\n",
            f.title, f.severity, f.argument, f.recommendation
        );
        if !f.evidence_seqs.is_empty() {
            let seqs: Vec<String> = f.evidence_seqs.iter().map(|s| format!("#{s}")).collect();
            let _ = writeln!(md, "Evidence: messages {}\n", seqs.join(", "));
        }
    }
    md
}

/// The whole report as one HTML page.
fn html(contents: &Contents) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!doctype html>\n<html><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        escape(&contents.title),
        escape(&contents.title)
    );
    if let Some(question) = &contents.question {
        let _ = writeln!(
            page,
            "<section class=\"question\"><h2>The question</h2>{}</section>",
            markdown_html(question)
        );
    }
    let _ = writeln!(
        page,
        "<section class=\"answer\"><h2>The answer</h2>{}</section>",
        markdown_html(&contents.answer)
    );
    if !contents.charts.is_empty() {
        page.push_str("<section class=\"charts\"><h2>Charts</h2>\n");
        for chart in &contents.charts {
            let _ = writeln!(
                page,
                "<figure><img alt=\"{0}\" src=\"data:{1};base64,{2}\"><figcaption>{0}</figcaption></figure>",
                escape(&chart.path),
                mime(&chart.path),
                base64::engine::general_purpose::STANDARD.encode(&chart.bytes)
            );
        }
        page.push_str("</section>\n");
    }
    if !contents.tables.is_empty() {
        page.push_str("<section class=\"data\"><h2>Data</h2>\n");
        for table in &contents.tables {
            page.push_str(&csv_html(table));
        }
        page.push_str("</section>\n");
    }
    if let Some(review) = &contents.review {
        page.push_str(&review_html(review));
    }
    if !contents.left_out.is_empty() {
        page.push_str("<section class=\"left-out\"><h2>Left out</h2><ul>");
        for line in &contents.left_out {
            let _ = write!(page, "<li>{}</li>", escape(line));
        }
        page.push_str("</ul></section>\n");
    }
    page.push_str("</body></html>\n");
    page
}

/// A CSV as a table of its first rows, with the whole file attached as a download.
fn csv_html(table: &Attached) -> String {
    let mut out = String::new();
    let _ = write!(out, "<h3>{}</h3>", escape(&table.path));
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(table.bytes.as_slice());
    let mut rows = 0usize;
    let mut total = 0usize;
    out.push_str("<div class=\"table\"><table>");
    for record in reader.records() {
        let Ok(record) = record else {
            break;
        };
        total += 1;
        if rows > SHOWN_ROWS {
            continue;
        }
        let cell = if rows == 0 { "th" } else { "td" };
        out.push_str("<tr>");
        for field in &record {
            let _ = write!(out, "<{cell}>{}</{cell}>", escape(field));
        }
        out.push_str("</tr>");
        rows += 1;
    }
    out.push_str("</table></div>");
    let data_rows = total.saturating_sub(1);
    let shown = rows.saturating_sub(1);
    let _ = writeln!(
        out,
        "<p class=\"note\">{} rows{}. <a download=\"{}\" href=\"data:text/csv;base64,{}\">Save the whole CSV</a></p>",
        data_rows,
        if shown < data_rows {
            format!(", the first {shown} shown")
        } else {
            String::new()
        },
        escape(&flat_name(&table.path)),
        base64::engine::general_purpose::STANDARD.encode(&table.bytes)
    );
    out
}

/// The review as the HTML report shows it.
fn review_html(review: &Review) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<section class=\"review\"><h2>The tenth man's review: risk {}</h2><p>{}</p>",
        escape(review.risk_level.as_str()),
        escape(review.summary.trim())
    );
    for finding in &review.findings {
        let f = &finding.body;
        let _ = write!(
            out,
            "<article class=\"finding\"><h3>{} <span class=\"severity\">({})</span></h3><p>{}</p>\
             <p><strong>Recommendation:</strong> {}</p>",
            escape(&f.title),
            escape(f.severity.as_str()),
            escape(&f.argument),
            escape(&f.recommendation)
        );
        if !f.evidence_seqs.is_empty() {
            let seqs: Vec<String> = f.evidence_seqs.iter().map(|s| format!("#{s}")).collect();
            let _ = write!(
                out,
                "<p class=\"note\">Evidence: messages {}</p>",
                seqs.join(", ")
            );
        }
        out.push_str("</article>");
    }
    out.push_str("</section>\n");
    out
}

/// Markdown as HTML, its raw HTML kept as text and its links limited to web and mail ones.
fn markdown_html(text: &str) -> String {
    use pulldown_cmark::{CowStr, Event, Options, Parser, Tag};
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let events = Parser::new_ext(text, options).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: if safe_link(&dest_url) {
                dest_url
            } else {
                CowStr::Borrowed("#")
            },
            title,
            id,
        }),
        // An image the answer names would be fetched when the page opens: it is linked instead.
        Event::Start(Tag::Image { dest_url, .. }) => {
            Event::Text(CowStr::from(format!("[image: {dest_url}] ")))
        }
        Event::End(pulldown_cmark::TagEnd::Image) => Event::Text(CowStr::Borrowed("")),
        other => other,
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// Whether a link in an answer may stay a link: web and mail addresses, and anchors.
fn safe_link(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    lower.starts_with("https://")
        || lower.starts_with("http://")
        || lower.starts_with("mailto:")
        || lower.starts_with('#')
}

/// Text made safe inside HTML elements and attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A workspace path as one file name: `out/q3 chart.png` → `out_q3 chart.png`.
fn flat_name(path: &str) -> String {
    path.replace(['/', '\\'], "_")
}

fn extension(path: &str) -> String {
    path.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default()
}

fn mime(path: &str) -> &'static str {
    match extension(path).as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        "gif" => "image/gif",
        _ => "image/webp",
    }
}

/// Writes `bytes` to `path` through a temporary file beside it.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write as _;
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let io = |source| RuntimeError::Io {
        action: "write",
        path: path.to_path_buf(),
        source,
    };
    let mut file = tempfile::NamedTempFile::new_in(folder).map_err(io)?;
    file.write_all(bytes)
        .and_then(|()| file.as_file().sync_all())
        .map_err(io)?;
    file.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}\
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #d0d7de}\
img{max-width:100%}figure{margin:1rem 0}figcaption,.note{color:#57606a;font-size:.9rem}\
.table{overflow-x:auto}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.2rem .5rem}\
th{background:#f6f8fa}pre{background:#f6f8fa;padding:.5rem;overflow-x:auto}\
.finding{border-left:3px solid #bf8700;padding-left:.75rem;margin:1rem 0}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answers_html_and_script_links_stay_text() {
        let out = markdown_html(
            "Total **42**.\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) [y](https://e.org) ![z](https://e.org/p.png)",
        );
        assert!(out.contains("<strong>42</strong>"), "{out}");
        assert!(!out.contains("<script>"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
        assert!(out.contains("href=\"#\""), "{out}");
        assert!(out.contains("href=\"https://e.org\""), "{out}");
        assert!(!out.contains("<img"), "{out}");
    }

    #[test]
    fn a_csv_shows_its_first_rows_and_attaches_the_whole_file() {
        let mut csv = String::from("region,net\n");
        for i in 0..300 {
            csv.push_str(&format!("r{i},{i}\n"));
        }
        csv.push_str("\"<b>x</b>\",1\n");
        let out = csv_html(&Attached {
            path: "out/q3.csv".into(),
            bytes: csv.into_bytes(),
        });
        assert!(out.contains("<th>region</th><th>net</th>"));
        assert!(out.contains("301 rows, the first 200 shown"), "{out}");
        assert!(out.contains("download=\"out_q3.csv\""));
        assert!(!out.contains("<b>x</b>"));
    }
}
