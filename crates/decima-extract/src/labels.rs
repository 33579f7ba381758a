//! Labelled values in tool output and code: `label: value`, `label = value`, `label ....
//! value`, `label<TAB>value`, YAML nesting (`source:` then `  brokers: …` is
//! `source.brokers`), `key=value` pairs of a log line, and JSON objects (`"key": value`, nested
//! keys joined with dots, objects in an array read as table rows); tables go to [`super::tables`].
//! Each becomes a statement that keeps the label with its value. One pass over the lines; JSON is
//! read by a small tokenizer, so a truncated document still yields what it holds.

use super::StatementKind;
use super::tables::{Row, table_at};

/// Statements read from one text at most: the rest is left to the literal scanner.
const MAX_FACTS: usize = 48;
const MAX_LABEL_CHARS: usize = 48;
const MAX_VALUE_CHARS: usize = 160;

/// A statement read from output or code: its key (the label, or a row's key cell with its
/// header), its text, and whether it is a label or a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Labelled {
    pub(super) key: String,
    pub(super) text: String,
    pub(super) kind: StatementKind,
}

/// Reads the labelled values and table rows of `text`.
pub(super) fn read_output(text: &str) -> Vec<Labelled> {
    let mut out = Vec::new();
    let trimmed = text.trim_start();
    let json_like = trimmed.starts_with('{')
        || trimmed.starts_with('[')
            && trimmed[1..].trim_start().starts_with([
                '{', '[', '"', ']', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9',
            ]);
    if json_like {
        json(trimmed, &mut out);
        if !out.is_empty() {
            return out;
        }
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut parents: Vec<(usize, String)> = Vec::new();
    let mut i = 0;
    while i < lines.len() && out.len() < MAX_FACTS {
        if let Some((next, rows)) = table_at(&lines, i) {
            out.extend(rows.iter().map(row_fact));
            i = next;
            parents.clear();
            continue;
        }
        // A one-column result: a name over a rule over values (`count` / `-----` / `8522163`).
        if let Some((next, facts)) = single_column(&lines, i) {
            out.extend(facts);
            i = next;
            continue;
        }
        let line = lines[i];
        i += 1;
        if let Some((command, schedule)) = cron_line(line.trim()) {
            push_pair(&mut out, command.to_string(), &schedule);
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let body = strip_log_prefix(strip_bullet(line.trim()));
        if body.is_empty() || body.len() > 300 || body.starts_with("//") || body.starts_with('#') {
            continue;
        }
        if body.starts_with('{') && body.contains("\":") {
            json(body, &mut out);
            continue;
        }
        if let Some((name, status)) = status_line(body) {
            push_pair(&mut out, name.to_string(), &status);
            continue;
        }
        while parents.last().is_some_and(|(d, _)| *d >= indent) {
            parents.pop();
        }
        match pair(body) {
            Some((label, "")) => {
                // A YAML mapping's key: the lines indented under it belong to it.
                parents.push((indent, label.to_string()));
            }
            Some((label, value)) => {
                let mut path = String::new();
                for (_, p) in &parents {
                    path.push_str(p);
                    path.push('.');
                }
                path.push_str(label);
                push_pair(&mut out, path, value);
            }
            None => logfmt(body, &mut out),
        }
    }
    out.truncate(MAX_FACTS);
    out
}

/// A crontab entry: five schedule fields (or `@daily` and the like), then the command; the
/// command's first word is the label, the schedule its value
/// (`25 5 * * 5 /opt/etl/run_weekly_churn.sh` → `/opt/etl/run_weekly_churn.sh: 25 5 * * 5`).
fn cron_line(line: &str) -> Option<(&str, String)> {
    let field = |t: &str| {
        !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'*' | b'/' | b',' | b'-'))
    };
    let mut tokens = line.split_whitespace();
    let first = tokens.next()?;
    let schedule = if first.starts_with('@') && first.len() > 2 {
        first.to_string()
    } else {
        let rest: Vec<&str> = tokens.by_ref().take(4).collect();
        if !field(first) || rest.len() < 4 || !rest.iter().all(|t| field(t)) {
            return None;
        }
        // A row of numbers is not a schedule: one field at least is a `*` or a step.
        if !std::iter::once(first)
            .chain(rest.iter().copied())
            .any(|t| t.contains(['*', '/']))
        {
            return None;
        }
        format!("{first} {}", rest.join(" "))
    };
    let command = tokens.next()?;
    command
        .bytes()
        .any(|b| b.is_ascii_alphabetic())
        .then_some((command, schedule))
}

/// A test runner's result line: a status word, the count it found, and the test's name
/// (`2 of 3 FAIL 384 unique_subscriptions_id ....` → `unique_subscriptions_id: FAIL 384`).
fn status_line(body: &str) -> Option<(&str, String)> {
    const STATUSES: [&str; 8] = [
        "PASS", "PASSED", "FAIL", "FAILED", "ERROR", "WARN", "SKIP", "SKIPPED",
    ];
    let tokens: Vec<&str> = body.split_whitespace().take(8).collect();
    let k = tokens.iter().position(|t| STATUSES.contains(t))?;
    let mut j = k + 1;
    let mut status = tokens[k].to_string();
    if let Some(n) = tokens
        .get(j)
        .filter(|t| t.bytes().all(|b| b.is_ascii_digit()))
    {
        status.push(' ');
        status.push_str(n);
        j += 1;
    }
    let name = tokens.get(j)?;
    let identifier = name.len() >= 3
        && name.bytes().any(|b| b.is_ascii_alphabetic())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'/' | b'-'))
        && !name.contains("..");
    identifier.then_some((name, status))
}

/// A report line of the form `Label: value` whose value holds a digit, as an agent states a
/// result ("- Churn rate: 3.4%").
pub(super) fn label_line(line: &str) -> Option<(&str, &str)> {
    let body = strip_bullet(line.trim());
    if body.len() > 160 || !body.contains(": ") {
        return None;
    }
    let (label, value) = pair(body)?;
    (!value.is_empty() && value.bytes().any(|b| b.is_ascii_digit())).then_some((label, value))
}

/// What a log line says before its message: `[dedupe] `, `2026-10-05 14:01:22 `,
/// `12:01:14 `, `INFO `, in any order.
fn strip_log_prefix(body: &str) -> &str {
    let mut b = body;
    loop {
        let before = b.len();
        if b.starts_with('[')
            && let Some(end) = b.find("] ")
            && end <= 40
        {
            b = b[end + 2..].trim_start();
        }
        let first = b.split(' ').next().unwrap_or("");
        let stamp = first.len() >= 5
            && first.starts_with(|c: char| c.is_ascii_digit())
            && first.bytes().all(|c| {
                c.is_ascii_digit() || matches!(c, b'-' | b':' | b'.' | b'T' | b'Z' | b'+' | b',')
            })
            && first.contains([':', '-']);
        let level = matches!(
            first.trim_end_matches(':'),
            "INFO" | "DEBUG" | "WARN" | "WARNING" | "ERROR" | "TRACE" | "NOTICE"
        );
        if (stamp || level) && b.len() > first.len() {
            b = b[first.len()..].trim_start();
        }
        if b.len() == before {
            return b;
        }
    }
}

/// A result of one column: a name, a rule under it, then one or more values; each value is a
/// statement `name: value`.
fn single_column(lines: &[&str], i: usize) -> Option<(usize, Vec<Labelled>)> {
    let name = lines.get(i)?.trim();
    let rule = lines.get(i + 1)?.trim();
    if name.is_empty()
        || name.contains(char::is_whitespace)
        || !label_ok(name)
        || rule.len() < 3
        || !rule.bytes().all(|b| b == b'-' || b == b'=')
    {
        return None;
    }
    let mut facts = Vec::new();
    let mut j = i + 2;
    while let Some(v) = lines.get(j).map(|l| l.trim()) {
        if v.is_empty() || v.starts_with('(') || facts.len() >= 20 {
            break;
        }
        push_pair(&mut facts, name.to_string(), v);
        j += 1;
    }
    (!facts.is_empty()).then_some((j, facts))
}

fn row_fact(r: &Row) -> Labelled {
    let key = if r.key_header.is_empty() {
        r.key.clone()
    } else {
        format!("{} {}", r.key_header, r.key)
    };
    Labelled {
        key,
        text: r.text(),
        kind: StatementKind::Row,
    }
}

/// Labels the operation line already reports (its exit code).
fn exit_label(label: &str) -> bool {
    let l = label.to_ascii_lowercase().replace([' ', '-'], "_");
    matches!(
        l.as_str(),
        "exit_code"
            | "exit"
            | "exit_status"
            | "exitcode"
            | "returncode"
            | "return_code"
            | "rc"
            | "status_code"
    )
}

fn push_pair(out: &mut Vec<Labelled>, label: String, value: &str) {
    if value.chars().count() > MAX_VALUE_CHARS
        || label.trim().is_empty()
        || label.chars().count() > MAX_LABEL_CHARS * 2
        || exit_label(&label)
    {
        return;
    }
    out.push(Labelled {
        text: format!("{label}: {value}"),
        key: label,
        kind: StatementKind::Labelled,
    });
}

fn strip_bullet(s: &str) -> &str {
    for b in ["- ", "* ", "• "] {
        if let Some(r) = s.strip_prefix(b) {
            return r.trim_start();
        }
    }
    s
}

/// A label: a short name, not a sentence, a number, a time or a URL scheme.
fn label_ok(label: &str) -> bool {
    let l = label.trim();
    let words = l.split_whitespace().count();
    !l.is_empty()
        && l.chars().count() <= MAX_LABEL_CHARS
        && (1..=6).contains(&words)
        && l.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
        && !l.ends_with(['.', '!', '?'])
        && !l.contains(['{', '[', '<', '>', '"', '`'])
        && l.matches('(').count() == l.matches(')').count()
        && !matches!(
            l.to_ascii_lowercase().as_str(),
            "http" | "https" | "ftp" | "s3" | "file" | "mailto" | "jdbc" | "redis" | "postgres"
        )
}

/// A value: something said, not code being called.
fn value_ok(v: &str) -> bool {
    let v = v.trim();
    let call = v.contains('(') && v.ends_with(')') && !v.contains(' ') && v.contains('.');
    !(v.is_empty() || v.chars().count() > MAX_VALUE_CHARS || call || v.ends_with(['{', '[']))
}

/// `label: value`, `label = value`, `label .... value`, `label<TAB>value`, `label | value`,
/// `name:value` and `name   value` for a name without spaces (`used_memory_human:2.99G`,
/// `spark.sql.shuffle.partitions     1000`); a value may be empty (a YAML mapping's key).
/// Quoted labels lose their quotes, trailing commas go.
fn pair(body: &str) -> Option<(&str, &str)> {
    let body = body.trim_end_matches(',');
    let first_space = body.find(' ').unwrap_or(body.len());
    let cands = [
        body.find(": ").map(|p| (p, 2)),
        body.find('：').map(|p| (p, '：'.len_utf8())),
        body.strip_suffix(':').map(|b| (b.len(), 1)),
        body.find(" = ").map(|p| (p, 3)),
        body.find('=')
            .filter(|&p| !body[..p].contains(' ') && p > 0)
            .map(|p| (p, 1)),
        body.find("....").map(|p| {
            let dots = body[p..]
                .bytes()
                .take_while(|&b| b == b'.' || b == b' ')
                .count();
            (p, dots)
        }),
        body.find('\t').map(|p| (p, 1)),
        (body.matches('|').count() == 1)
            .then(|| body.find('|').map(|p| (p, 1)))
            .flatten(),
        body.find(':')
            .filter(|&p| p >= 2 && p < first_space && !body[p + 1..].starts_with(['/', ' ']))
            .map(|p| (p, 1)),
        body.find("  ")
            .filter(|&p| p == first_space && p > 0)
            .map(|p| (p, body[p..].len() - body[p..].trim_start().len())),
    ];
    let (p, len) = cands.into_iter().flatten().min_by_key(|&(p, _)| p)?;
    let label = body[..p].trim().trim_matches(['"', '\'']).trim();
    // Aligned columns may still show a separator after the spaces: `customers   | 37981`.
    let value = body[p + len..]
        .trim()
        .trim_start_matches(['|', ':', '='])
        .trim()
        .trim_matches('"');
    // `key=value` with several pairs on the line is a log line, read as such.
    if len == 1 && body[p..].starts_with('=') && body[p + 1..].contains('=') {
        return None;
    }
    if !label_ok(label) || label.contains("://") || (!value.is_empty() && !value_ok(value)) {
        return None;
    }
    Some((label, value))
}

/// `key=value` pairs of a log line: `level=info rows=1234 elapsed=3.2s`.
fn logfmt(line: &str, out: &mut Vec<Labelled>) {
    let pairs: Vec<(&str, &str)> = line
        .split_whitespace()
        .filter_map(|t| t.split_once('='))
        .filter(|(k, v)| {
            !v.is_empty()
                && !k.is_empty()
                && k.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
                && k.as_bytes()[0].is_ascii_alphabetic()
        })
        .collect();
    if pairs.len() >= 2 || pairs.len() == 1 && line.split_whitespace().count() <= 3 {
        for (k, v) in pairs {
            if out.len() < MAX_FACTS {
                push_pair(out, k.to_string(), v.trim_matches('"'));
            }
        }
    }
}

/// One open JSON container: its name in its parent, and for an object inside an array (a row)
/// the scalars read so far.
struct Frame {
    name: String,
    array: bool,
    row: bool,
    scalars: Vec<(String, String)>,
}

/// The dotted path of `last` inside the open containers (the outermost has no name).
fn json_path(stack: &[Frame], last: &str) -> String {
    let mut p: Vec<&str> = stack
        .iter()
        .map(|f| f.name.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    if !last.is_empty() {
        p.push(last);
    }
    p.join(".")
}

/// A small JSON tokenizer: emits scalars under their dotted path, objects inside arrays as rows,
/// arrays of scalars as one list; stops quietly where the text ends or stops being JSON.
fn json(text: &str, out: &mut Vec<Labelled>) {
    let b = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut key: Option<String> = None;
    let mut i = 0;
    while i < b.len() && out.len() < MAX_FACTS {
        let value = match b[i] {
            b'{' | b'[' => {
                let row = b[i] == b'{' && stack.last().is_some_and(|f| f.array);
                stack.push(Frame {
                    name: key.take().unwrap_or_default(),
                    array: b[i] == b'[',
                    row,
                    scalars: Vec::new(),
                });
                i += 1;
                continue;
            }
            b'}' | b']' => {
                let Some(f) = stack.pop() else { break };
                close(f, &stack, out);
                i += 1;
                continue;
            }
            b'"' => {
                let (s, next) = read_string(text, i);
                i = next;
                let in_object = stack.last().is_some_and(|f| !f.array);
                if in_object && key.is_none() && text[i..].trim_start().starts_with(':') {
                    key = Some(s);
                    continue;
                }
                s
            }
            c if c == b'-' || c.is_ascii_alphanumeric() => {
                let end = text[i..]
                    .find([',', '}', ']', ' ', '\n', '\r', '\t'])
                    .map_or(b.len(), |p| i + p);
                let s = text[i..end].to_string();
                i = end;
                s
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let k = key.take().unwrap_or_default();
        match stack.last_mut() {
            Some(f) if (f.array || f.row) && f.scalars.len() < 64 => f.scalars.push((k, value)),
            Some(f) if f.array || f.row => {}
            Some(_) if !k.is_empty() => {
                let label = json_path(&stack, &k);
                push_pair(out, label, &value);
            }
            _ => {}
        }
    }
    while let Some(f) = stack.pop() {
        close(f, &stack, out);
    }
}

/// What a closed container leaves: a row for an object in an array, a list for an array of
/// scalars.
fn close(f: Frame, stack: &[Frame], out: &mut Vec<Labelled>) {
    if f.array {
        if !f.scalars.is_empty() {
            let items: Vec<&str> = f.scalars.iter().map(|(_, v)| v.as_str()).collect();
            push_pair(out, json_path(stack, &f.name), &items.join(", "));
        }
        return;
    }
    if f.row {
        let mut cells = f.scalars.into_iter();
        let Some((key_header, key)) = cells.next() else {
            return;
        };
        let row = Row {
            key_header,
            key,
            cells: cells.take(8).collect(),
        };
        if !row.cells.is_empty() {
            out.push(row_fact(&row));
        }
    }
}

/// A JSON string starting at `b[i] == '"'`: its text (escapes kept as written) and the index
/// after its closing quote.
fn read_string(text: &str, i: usize) -> (String, usize) {
    let b = text.as_bytes();
    let mut j = i + 1;
    while j < b.len() && b[j] != b'"' {
        j += if b[j] == b'\\' { 2 } else { 1 };
    }
    let end = j.min(b.len());
    let s = text.get(i + 1..end).unwrap_or("").to_string();
    (s, (end + 1).min(b.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<String> {
        read_output(s).into_iter().map(|l| l.text).collect()
    }

    #[test]
    fn labels_keep_their_values() {
        assert_eq!(
            texts("Rows scanned ........ 1,204,331\nerrors: 0\nelapsed = 3.2 s\n"),
            vec!["Rows scanned: 1,204,331", "errors: 0", "elapsed: 3.2 s"]
        );
        assert_eq!(
            texts("ingest:\n  batch_rows: 5000\nsource:\n  brokers: kafka-3.acme.internal:9092\n"),
            vec![
                "ingest.batch_rows: 5000",
                "source.brokers: kafka-3.acme.internal:9092"
            ]
        );
        assert_eq!(
            texts(r#"{"status":"ok","build":"1.2.3-rc.4","db":{"pool":12}}"#),
            vec!["status: ok", "build: 1.2.3-rc.4", "db.pool: 12"]
        );
        assert_eq!(
            texts(r#"[{"region":"EMEA","churn":0.034},{"region":"APAC","churn":0.051}]"#),
            vec!["region EMEA: churn 0.034", "region APAC: churn 0.051"]
        );
        assert_eq!(
            texts("2026-10-28 09:12:44 INFO scoring level=info rows=1234 p95_ms=87\n"),
            vec!["level: info", "rows: 1234", "p95_ms: 87"]
        );
        assert_eq!(
            texts("CHURN_WINDOW_DAYS = 45\ndf = pd.read_csv(path)\n"),
            vec!["CHURN_WINDOW_DAYS: 45"]
        );
        assert!(texts("see https://x.example.com/a for details\n").is_empty());
        assert_eq!(
            texts(
                "skipped (currency mismatch): 673\nused_memory_human:2.99G\nspark.sql.shuffle.partitions     1000\n"
            ),
            vec![
                "skipped (currency mismatch): 673",
                "used_memory_human: 2.99G",
                "spark.sql.shuffle.partitions: 1000"
            ]
        );
        assert_eq!(
            texts(
                "-[ RECORD 1 ]-----+------\ncustomers        | 37981\n[dedupe] rows_dropped: 788\n12:01:14 INFO loader: done\n"
            ),
            vec!["customers: 37981", "rows_dropped: 788", "loader: done"]
        );
        assert_eq!(
            texts(" active_subscribers\n--------------------\n   128305\n(1 row)\n"),
            vec!["active_subscribers: 128305"]
        );
        assert!(texts("12:30 sharp\nC:\\Users\\x\n").is_empty());
        assert_eq!(
            texts("[dedupe] rows_in: 559413\n[dedupe] rows_dropped: 788\n"),
            vec!["rows_in: 559413", "rows_dropped: 788"]
        );
        assert_eq!(
            texts("本季度总收入（元）：18,691,357.17\n"),
            vec!["本季度总收入（元）: 18,691,357.17"]
        );
        assert!(texts("The job finished. Nothing to report.\n").is_empty());
    }

    #[test]
    fn schedules_and_test_results_keep_what_they_are_for() {
        assert_eq!(
            texts(
                "# m h dom mon dow  command\n*/15 * * * * /opt/poll.sh >> /var/log/poll.log 2>&1\n30 4 * * 1-5 /opt/etl/nightly_export.sh\n@daily /opt/rotate.sh\n"
            ),
            vec![
                "/opt/poll.sh: */15 * * * *",
                "/opt/etl/nightly_export.sh: 30 4 * * 1-5",
                "/opt/rotate.sh: @daily"
            ]
        );
        // Numbers in columns are a table, not a schedule.
        assert!(
            !texts("1 2 3 4 5 total\n")
                .iter()
                .any(|t| t.contains("total:"))
        );
        assert_eq!(
            texts(
                "09:14:02  4 of 7 FAIL 12 accepted_values_orders_status .... [FAIL 12 in 0.31s]\n09:14:03  5 of 7 PASS not_null_orders_id ..... [PASS in 0.2s]\n"
            ),
            vec![
                "accepted_values_orders_status: FAIL 12",
                "not_null_orders_id: PASS"
            ]
        );
    }
}
