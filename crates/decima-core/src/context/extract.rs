//! The `extract` strategy: a summary written by rules, without an LLM.
//!
//! It keeps what an agent cannot afford to lose: the goal, the todo state, the decisions, the
//! user's quoted constraints, tool digests (tool, key argument, exit code, first lines) and every
//! exact literal (ids, paths, URLs, numbers with units). The output has fixed section headings
//! and can be parsed back into a [`Digest`], which is how summaries of summaries keep the
//! literals of what they fold.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::{Message, Role, ToolCall};

/// One piece of history to summarise: a message, or a step record dressed as one.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// Who said it; quoted constraints are only taken from the user.
    pub role: Role,
    /// The text.
    pub content: &'a str,
    /// Tool calls, which become operation digests.
    pub tool_calls: &'a [ToolCall],
    /// For tool results: the call they answer, so exit code and first lines join its digest.
    pub tool_call_id: Option<&'a str>,
}

impl<'a> From<&'a Message> for Source<'a> {
    fn from(m: &'a Message) -> Self {
        Source {
            role: m.role,
            content: &m.content,
            tool_calls: &m.tool_calls,
            tool_call_id: m.tool_call_id.as_deref(),
        }
    }
}

/// How much detail a rendered digest keeps. Each step is shorter than the one before and drops
/// no literal: what leaves the prose is still listed under "Literals".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Detail {
    /// Standard compression: every decision, the last 3 operations with their first lines.
    Standard,
    /// Deep compression: key decisions only, one line per operation.
    Deep,
    /// Folded again: operations become counts per tool.
    Folded,
}

/// One tool operation's digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// Tool name and key argument, e.g. `shell cmd=wc -l /data/a.csv`.
    pub line: String,
    /// The exit code, when the result reported one.
    pub exit: Option<String>,
    /// The first lines of the result.
    pub first_lines: Vec<String>,
}

impl Operation {
    fn tool(&self) -> &str {
        self.line.split_whitespace().next().unwrap_or("tool")
    }

    fn render_line(&self) -> String {
        match &self.exit {
            Some(code) => format!("- {} → exit {code}", self.line),
            None => format!("- {}", self.line),
        }
    }
}

/// What the extract strategy keeps from a range of history, before it is rendered as text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Digest {
    /// Goal statements ("Goal: ...", or the first user message).
    pub goal: Vec<String>,
    /// Todo items, latest state of each.
    pub todos: Vec<String>,
    /// Decision sentences, in order.
    pub decisions: Vec<String>,
    /// The user's quoted constraints, quotes included.
    pub constraints: Vec<String>,
    /// Tool operations, in order.
    pub operations: Vec<Operation>,
    /// Operations already folded into counts, per tool.
    pub folded_ops: BTreeMap<String, u64>,
    /// Every exact literal seen, in first-seen order.
    pub literals: Vec<String>,
}

const DECISION_MARKERS: [&str; 6] = [
    "decision:",
    "decided",
    "we will",
    "we'll",
    "agreed to",
    "决定",
];
const KEY_DECISION_MARKERS: [&str; 3] = ["decision:", "decided", "决定"];
const UNITS: [&str; 24] = [
    "eur", "usd", "cny", "rmb", "%", "ms", "s", "sec", "min", "h", "kb", "mb", "gb", "tb", "b",
    "bytes", "rows", "lines", "tokens", "files", "records", "days", "hours", "minutes",
];
const KEY_ARGS: [&str; 8] = [
    "cmd",
    "command",
    "path",
    "file",
    "file_path",
    "url",
    "query",
    "pattern",
];
const DETAILED_OPS: usize = 3;
const FIRST_LINES: usize = 3;
const LINE_CHARS: usize = 160;

/// Renders the extract summary of messages at the given detail.
pub fn extract_messages(messages: &[Message], detail: Detail) -> String {
    Digest::from_sources(messages.iter().map(Source::from)).render(detail)
}

impl Digest {
    /// Extracts a digest from history in seq order.
    pub fn from_sources<'a>(sources: impl IntoIterator<Item = Source<'a>>) -> Digest {
        let mut d = Digest::default();
        let mut lits = OrderedSet::default();
        let mut todo_index: HashMap<String, usize> = HashMap::new();
        let mut calls: HashMap<String, usize> = HashMap::new();
        let mut first_user: Option<String> = None;
        for s in sources {
            if s.role == Role::User && first_user.is_none() && !s.content.trim().is_empty() {
                first_user = Some(truncate(first_sentences(s.content), 300));
            }
            if s.role == Role::Tool {
                literals_in(
                    first_lines(s.content, FIRST_LINES).join("\n").as_str(),
                    &mut lits,
                );
                if let Some(i) = s.tool_call_id.and_then(|id| calls.get(id)).copied()
                    && let Some(op) = d.operations.get_mut(i)
                {
                    op.exit = exit_code(s.content);
                    op.first_lines = first_lines(s.content, FIRST_LINES)
                        .into_iter()
                        .map(|l| truncate(l, LINE_CHARS))
                        .collect();
                }
                continue;
            }
            d.scan_text(s.content, s.role, &mut todo_index);
            literals_in(s.content, &mut lits);
            for call in s.tool_calls {
                let op = Operation {
                    line: format!("{} {}", call.name, key_argument(&call.arguments)),
                    exit: None,
                    first_lines: Vec::new(),
                };
                literals_in(&op.line, &mut lits);
                calls.insert(call.id.clone(), d.operations.len());
                d.operations.push(op);
            }
        }
        if d.goal.is_empty()
            && let Some(g) = first_user
        {
            d.goal.push(g);
        }
        d.literals = lits.items;
        d
    }

    fn scan_text(&mut self, text: &str, role: Role, todo_index: &mut HashMap<String, usize>) {
        for sentence in sentences(text) {
            let lower = sentence.to_lowercase();
            if lower.contains("goal:") || sentence.contains("目标：") {
                push_unique(&mut self.goal, sentence);
            } else if is_todo(sentence) {
                let key = todo_key(sentence);
                match todo_index.get(&key) {
                    Some(&i) => self.todos[i] = sentence.to_string(),
                    None => {
                        todo_index.insert(key, self.todos.len());
                        self.todos.push(sentence.to_string());
                    }
                }
            } else if DECISION_MARKERS.iter().any(|m| lower.contains(m)) {
                push_unique(&mut self.decisions, sentence);
            }
        }
        if role == Role::User {
            for q in quotes(text) {
                push_unique(&mut self.constraints, &q);
            }
        }
    }

    /// Parses a rendered digest back, so a summary can be folded again without losing what it
    /// kept. Literals are re-extracted from the whole text, so none can be lost on the way.
    pub fn parse(text: &str) -> Digest {
        let mut d = Digest::default();
        let mut section = "";
        for line in text.lines() {
            if let Some(h) = line.strip_prefix("## ") {
                section = match h.trim() {
                    "Goal" => "goal",
                    "Todo" => "todo",
                    "Decisions" => "decisions",
                    "Constraints" => "constraints",
                    "Operations" => "ops",
                    _ => "",
                };
                continue;
            }
            if let Some(detail) = line.strip_prefix("  | ") {
                if section == "ops"
                    && let Some(op) = d.operations.last_mut()
                {
                    op.first_lines.push(detail.to_string());
                }
                continue;
            }
            let Some(item) = line.strip_prefix("- ") else {
                continue;
            };
            match section {
                "goal" => push_unique(&mut d.goal, item),
                "todo" => push_unique(&mut d.todos, item),
                "decisions" => push_unique(&mut d.decisions, item),
                "constraints" => push_unique(&mut d.constraints, item),
                "ops" => {
                    if let Some(counts) = item.strip_prefix("folded operations: ") {
                        for part in counts.split(", ") {
                            if let Some((tool, n)) = part.rsplit_once('×')
                                && let Ok(n) = n.parse::<u64>()
                            {
                                *d.folded_ops.entry(tool.to_string()).or_default() += n;
                            }
                        }
                    } else {
                        d.operations.push(Operation {
                            line: item.to_string(),
                            exit: None,
                            first_lines: Vec::new(),
                        });
                    }
                }
                _ => {}
            }
        }
        let mut lits = OrderedSet::default();
        literals_in(text, &mut lits);
        d.literals = lits.items;
        d
    }

    /// Appends a later digest to this one: items are deduplicated, todos keep their latest state.
    pub fn merge(&mut self, later: Digest) {
        for g in later.goal {
            push_unique(&mut self.goal, &g);
        }
        for t in later.todos {
            let key = todo_key(&t);
            match self.todos.iter().position(|x| todo_key(x) == key) {
                Some(i) => self.todos[i] = t,
                None => self.todos.push(t),
            }
        }
        for x in later.decisions {
            push_unique(&mut self.decisions, &x);
        }
        for x in later.constraints {
            push_unique(&mut self.constraints, &x);
        }
        self.operations.extend(later.operations);
        for (tool, n) in later.folded_ops {
            *self.folded_ops.entry(tool).or_default() += n;
        }
        let mut lits = OrderedSet::default();
        for l in self.literals.drain(..).chain(later.literals) {
            lits.insert(l);
        }
        self.literals = lits.items;
    }

    /// Renders the digest with fixed section headings. Every literal appears in the output:
    /// those the kept prose does not already carry are listed under "Literals".
    pub fn render(&self, detail: Detail) -> String {
        let mut out = String::new();
        out.push_str("## Goal\n");
        for g in &self.goal {
            push_item(&mut out, g);
        }
        out.push_str("## Todo\n");
        for t in &self.todos {
            push_item(&mut out, t);
        }
        out.push_str("## Decisions\n");
        for x in &self.decisions {
            let lower = x.to_lowercase();
            if detail == Detail::Standard || KEY_DECISION_MARKERS.iter().any(|m| lower.contains(m))
            {
                push_item(&mut out, x);
            }
        }
        out.push_str("## Constraints\n");
        for c in &self.constraints {
            push_item(&mut out, c);
        }
        out.push_str("## Operations\n");
        let mut counts = self.folded_ops.clone();
        let detailed_from = self.operations.len().saturating_sub(DETAILED_OPS);
        for (i, op) in self.operations.iter().enumerate() {
            match detail {
                Detail::Folded => *counts.entry(op.tool().to_string()).or_default() += 1,
                Detail::Deep => {
                    out.push_str(&op.render_line());
                    out.push('\n');
                }
                Detail::Standard => {
                    out.push_str(&op.render_line());
                    out.push('\n');
                    if i >= detailed_from {
                        for l in &op.first_lines {
                            out.push_str("  | ");
                            out.push_str(l);
                            out.push('\n');
                        }
                    }
                }
            }
        }
        if !counts.is_empty() {
            let parts: Vec<String> = counts.iter().map(|(t, n)| format!("{t}×{n}")).collect();
            out.push_str("- folded operations: ");
            out.push_str(&parts.join(", "));
            out.push('\n');
        }
        let mut present = OrderedSet::default();
        literals_in(&out, &mut present);
        let missing: Vec<&str> = self
            .literals
            .iter()
            .filter(|l| !present.contains(l))
            .map(String::as_str)
            .collect();
        out.push_str("## Literals\n");
        for chunk in missing.chunks(8) {
            out.push_str("- ");
            out.push_str(&chunk.join(", "));
            out.push('\n');
        }
        out
    }
}

/// Stored as its rendered text, which parses back without losing a literal.
impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.render(Detail::Standard))
    }
}

/// Parses the rendered text back.
impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Ok(Digest::parse(&text))
    }
}

fn push_item(out: &mut String, item: &str) {
    out.push_str("- ");
    // One item per line: a newline inside would break parsing back.
    out.push_str(&item.replace('\n', " "));
    out.push('\n');
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    let item = item.trim();
    if !item.is_empty() && !list.iter().any(|x| x == item) {
        list.push(item.to_string());
    }
}

/// Insertion-ordered set of strings, for deterministic output.
#[derive(Default)]
struct OrderedSet {
    items: Vec<String>,
    seen: HashSet<String>,
}

impl OrderedSet {
    fn insert(&mut self, s: String) {
        if !self.seen.contains(&s) {
            self.seen.insert(s.clone());
            self.items.push(s);
        }
    }

    fn contains(&self, s: &str) -> bool {
        self.seen.contains(s)
    }
}

fn truncate(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Splits text into sentences and lines, keeping terminators.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut iter = text.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        let next_ws = iter.peek().is_none_or(|(_, n)| n.is_whitespace());
        let cut = match c {
            '\n' => Some(i),
            '.' | '!' | '?' if next_ws => Some(i + c.len_utf8()),
            '。' | '！' | '？' => Some(i + c.len_utf8()),
            _ => None,
        };
        if let Some(end) = cut {
            let s = text[start..end].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = i + c.len_utf8();
        }
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

fn first_sentences(text: &str) -> &str {
    let trimmed = text.trim();
    match sentences(trimmed).first() {
        Some(s) => s,
        None => trimmed,
    }
}

fn first_lines(text: &str, n: usize) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(n)
        .collect()
}

fn is_todo(s: &str) -> bool {
    let t = s.trim_start_matches(['-', '*', ' ']);
    t.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("todo"))
        || s.contains("[ ]")
        || s.contains("[x]")
        || s.contains("[X]")
}

fn todo_key(s: &str) -> String {
    s.to_lowercase()
        .replace("[ ]", "")
        .replace("[x]", "")
        .trim_start_matches(['-', '*', ' '])
        .trim()
        .to_string()
}

/// Double-quoted spans (ASCII or curly), quotes included.
fn quotes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut open: Option<(usize, char)> = None;
    for (i, c) in text.char_indices() {
        match (open, c) {
            (None, '"') | (None, '“') => open = Some((i, c)),
            (Some((s, '"')), '"') | (Some((s, '“')), '”') => {
                let q = &text[s..i + c.len_utf8()];
                let inner = q.chars().count().saturating_sub(2);
                if (6..=400).contains(&inner) {
                    out.push(q.to_string());
                }
                open = None;
            }
            _ => {}
        }
    }
    out
}

fn exit_code(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let pos = lower.find("exit")?;
    let rest = &lower[pos + 4..];
    let start = rest.find(|c: char| c.is_ascii_digit())?;
    if start > 12 {
        return None;
    }
    let digits: String = rest[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let neg = rest[..start].ends_with('-');
    Some(if neg { format!("-{digits}") } else { digits })
}

/// `cmd=...`, `path=...` or the first argument; raw text when the arguments are not JSON.
fn key_argument(arguments: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(map)) => {
            let pick = KEY_ARGS
                .iter()
                .find_map(|k| map.get(*k).map(|v| (k.to_string(), v)))
                .or_else(|| map.iter().next().map(|(k, v)| (k.clone(), v)));
            match pick {
                Some((k, serde_json::Value::String(s))) => {
                    format!("{k}={}", truncate(&s.replace('\n', " "), LINE_CHARS))
                }
                Some((k, v)) => format!("{k}={}", truncate(&v.to_string(), LINE_CHARS)),
                None => String::new(),
            }
        }
        _ => truncate(&arguments.replace('\n', " "), LINE_CHARS),
    }
}

/// Adds the exact literals of `text`: URLs, paths, ids, and numbers with units.
fn literals_in(text: &str, out: &mut OrderedSet) {
    let tokens: Vec<&str> = text
        .split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '`' | '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | ',' | '"'
                )
                || c == '“'
                || c == '”'
                || c == '，'
                || c == '。'
        })
        .map(|t| {
            t.trim_end_matches(['.', ';', ':', '!', '?', '\'', '…'])
                .trim_start_matches('\'')
        })
        .filter(|t| !t.is_empty())
        .collect();
    for (i, tok) in tokens.iter().enumerate() {
        if is_url(tok) || is_path(tok) || is_id(tok) {
            out.insert((*tok).to_string());
        } else if is_number(tok) {
            if let Some(unit) = tokens.get(i + 1)
                && UNITS.contains(&unit.to_lowercase().as_str())
            {
                out.insert(format!("{tok} {unit}"));
            }
        } else if let Some(split) = tok.find(|c: char| !(c.is_ascii_digit() || c == '.'))
            && split > 0
            && is_number(&tok[..split])
            && UNITS.contains(&tok[split..].to_lowercase().as_str())
        {
            out.insert((*tok).to_string());
        }
    }
}

fn is_url(t: &str) -> bool {
    (t.starts_with("http://") || t.starts_with("https://")) && t.len() > 10
}

fn is_path(t: &str) -> bool {
    if !t.contains('/') || t.contains("://") || !t.is_ascii() {
        return false;
    }
    let rooted = (t.starts_with('/') || t.starts_with("./") || t.starts_with("~/"))
        && t.chars().any(|c| c.is_ascii_alphanumeric());
    let with_ext = t
        .rsplit('/')
        .next()
        .and_then(|last| last.rsplit_once('.'))
        .is_some_and(|(stem, ext)| {
            !stem.is_empty() && !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric())
        });
    rooted || with_ext
}

fn is_id(t: &str) -> bool {
    t.len() >= 4
        && t.len() <= 80
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars().any(|c| c.is_ascii_alphabetic())
        && t.contains(['-', '_'])
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && t.starts_with(|c: char| c.is_ascii_alphanumeric())
}

fn is_number(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_digit()) && t.chars().all(|c| c.is_ascii_digit() || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(role: Role, content: &str) -> Source<'_> {
        Source {
            role,
            content,
            tool_calls: &[],
            tool_call_id: None,
        }
    }

    #[test]
    fn keeps_goal_todos_decisions_constraints_and_literals() {
        let calls = vec![ToolCall {
            id: "c1".into(),
            name: "shell".into(),
            arguments: r#"{"cmd":"wc -l /workspace/a.csv"}"#.into(),
        }];
        let sources = vec![
            src(
                Role::User,
                "Goal: reconcile ACC-12345 above 100 EUR. Be careful.",
            ),
            src(
                Role::User,
                "Remember: \"Never touch /workspace/raw\". See https://x.example.com/a?b=1.",
            ),
            src(Role::Assistant, "TODO: check totals\n- [ ] load data"),
            src(
                Role::Assistant,
                "Some prose. Decision: exclude batch 7. We will use prompt-uuid-123 too.",
            ),
            Source {
                role: Role::Assistant,
                content: "",
                tool_calls: &calls,
                tool_call_id: None,
            },
            Source {
                role: Role::Tool,
                content: "exit_code=2\nno such file\n",
                tool_calls: &[],
                tool_call_id: Some("c1"),
            },
            src(Role::Assistant, "- [x] load data"),
        ];
        let d = Digest::from_sources(sources);
        assert_eq!(d.goal, vec!["Goal: reconcile ACC-12345 above 100 EUR."]);
        assert_eq!(d.todos, vec!["TODO: check totals", "- [x] load data"]);
        assert_eq!(d.decisions.len(), 2);
        assert_eq!(d.constraints, vec!["\"Never touch /workspace/raw\""]);
        assert_eq!(d.operations[0].exit.as_deref(), Some("2"));
        for lit in [
            "ACC-12345",
            "100 EUR",
            "/workspace/raw",
            "https://x.example.com/a?b=1",
            "prompt-uuid-123",
            "/workspace/a.csv",
        ] {
            assert!(
                d.literals.iter().any(|l| l == lit),
                "{lit} in {:?}",
                d.literals
            );
        }
        let text = d.render(Detail::Standard);
        assert!(text.contains("- shell cmd=wc -l /workspace/a.csv → exit 2"));
        assert!(text.contains("  | no such file"));
        let deep = d.render(Detail::Deep);
        assert!(!deep.contains("We will use"));
        let folded = d.render(Detail::Folded);
        assert!(folded.contains("shell×1"));
        for lit in &d.literals {
            for t in [&text, &deep, &folded] {
                assert!(t.contains(lit.as_str()), "{lit} lost in\n{t}");
            }
        }
        assert_eq!(d.render(Detail::Standard), text, "deterministic");
    }

    #[test]
    fn parse_round_trips_rendered_text() {
        let d = Digest::from_sources([
            src(Role::User, "Goal: ship v2 to /srv/app/v2.tar."),
            src(Role::Assistant, "Decision: use ACC-9."),
        ]);
        for detail in [Detail::Standard, Detail::Deep, Detail::Folded] {
            let text = d.render(detail);
            let back = Digest::parse(&text);
            assert_eq!(back.render(detail), text);
        }
        let mut a = Digest::parse(&d.render(Detail::Folded));
        a.merge(Digest::parse(&d.render(Detail::Folded)));
        assert_eq!(a.decisions.len(), 1);
    }

    #[test]
    fn literal_classifier() {
        let mut s = OrderedSet::default();
        literals_in(
            "and/or Q3 exit_code=0 0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a6b src/main.rs 5ms 20 %",
            &mut s,
        );
        assert_eq!(
            s.items,
            vec![
                "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a6b",
                "src/main.rs",
                "5ms",
                "20 %"
            ]
        );
    }
}
