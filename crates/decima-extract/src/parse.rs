//! Parsing a rendered digest back, and model-written summaries with it: known headings map onto
//! the digest's lists, unknown ones become notes.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::classify::classify_whole;
use super::cues::todo_key;
use super::facts::split_note;
use super::literals::{Literal, LiteralKind, Origin, scan_literals};
use super::operations::shape_of;
use super::restatements::restates;
use super::statements::split_grouped;
use super::{Digest, Note, Operation, Statement, StatementKind};

impl Digest {
    /// Parses a rendered digest back, so a summary can be folded again without losing what it
    /// kept. Model-written summaries parse too: known headings map onto the digest's lists,
    /// plain lines count as items, and unknown headings (and text before any heading) are kept
    /// as notes. Literals are re-extracted from the kept text and taken verbatim from the
    /// literal sections.
    pub fn parse(text: &str) -> Digest {
        Parser::default().run(text)
    }
}

/// Parses rendered or model-written summaries.
#[derive(Default)]
struct Parser {
    d: Digest,
    clock: u64,
    seen: HashMap<&'static str, HashSet<String>>,
    todo_at: HashMap<String, usize>,
    lit_at: HashMap<String, usize>,
    /// Under "Tool facts": the operation the statements that follow were printed by.
    tool_group: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PSec {
    Goal,
    Todo,
    Decisions,
    Constraints,
    Facts,
    ToolFacts,
    Ops,
    UserLits,
    Lits,
    ToolLits,
    Note(usize),
}

impl Parser {
    fn run(mut self, text: &str) -> Digest {
        let mut sec: Option<PSec> = None;
        let mut in_fence = false;
        for raw in text.lines() {
            let line = raw.trim_end();
            if line.trim_start().starts_with("```") {
                in_fence = !in_fence;
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            if !in_fence && let Some(h) = heading(line) {
                sec = Some(self.section(h));
                continue;
            }
            self.clock += 1;
            let current = match sec {
                Some(s) => s,
                None => {
                    let s = self.section("Summary");
                    sec = Some(s);
                    s
                }
            };
            if self.nested_line(current, line) {
                continue;
            }
            let item = strip_bullet(line.trim());
            if item.is_empty() {
                continue;
            }
            self.section_item(current, item);
        }
        self.d
    }

    /// Reads a line that goes with the one before it (a tool's statement or literal under its
    /// operation, an operation's result line) or names the operation of the tool facts after
    /// it. Returns whether the line was one of those.
    fn nested_line(&mut self, current: PSec, line: &str) -> bool {
        if current == PSec::ToolFacts
            && let Some(item) = line.strip_prefix("  - ")
            && let Some(st) = statement(item.trim(), self.clock)
        {
            // A statement a tool printed, under the line naming its operation.
            let group = self.tool_group.clone();
            self.add_statement(Statement { group, ..st });
            return true;
        }
        if current == PSec::ToolFacts
            && let Some(item) = line.strip_prefix("- ")
            && statement(item.trim(), self.clock).is_none()
        {
            self.tool_group = Some(shape_of(item.trim()));
            return true;
        }
        if current == PSec::Ops
            && let Some(lit) = line.strip_prefix("  - ")
        {
            let group = self.d.operations.last().map(|o| shape_of(&o.line));
            if let Some(st) = statement(lit.trim(), self.clock) {
                // A statement a tool printed, under its operation.
                self.add_statement(Statement { group, ..st });
                return true;
            }
            // A literal a tool printed, under its operation.
            let kind = classify_whole(lit.trim()).unwrap_or(LiteralKind::Quoted);
            self.add_literal(lit.trim().to_string(), kind, Origin::Tool, group);
            return true;
        }
        if let Some(detail) = line.strip_prefix("  | ") {
            if current == PSec::Ops
                && let Some(op) = self.d.operations.last_mut()
            {
                op.first_lines.push(detail.to_string());
            }
            self.scan(detail, Origin::Tool);
            return true;
        }
        false
    }

    /// Reads an item (its bullet stripped) into the list of the section it is under.
    fn section_item(&mut self, current: PSec, item: &str) {
        match current {
            PSec::Goal => self.item("goal", item, Origin::User),
            PSec::Decisions => self.item("decisions", item, Origin::Prose),
            PSec::Constraints => self.item("constraints", item, Origin::User),
            PSec::Facts | PSec::ToolFacts => self.fact_line(current, item),
            PSec::Todo => self.todo_line(item),
            PSec::Note(i) => {
                let seen = self.seen.entry("notes").or_default();
                let key = format!("{i}\u{0}{item}");
                if seen.insert(key)
                    && let Some(n) = self.d.notes.get_mut(i)
                {
                    n.lines.push(item.to_string());
                }
                self.scan(item, Origin::Prose);
            }
            PSec::Ops => {
                if let Some(counts) = item.strip_prefix("folded operations: ") {
                    parse_counts(counts, &mut self.d.folded_ops);
                } else {
                    self.operation_line(item);
                }
            }
            PSec::UserLits | PSec::Lits | PSec::ToolLits => {
                let origin = match current {
                    PSec::UserLits => Origin::User,
                    PSec::Lits => Origin::Prose,
                    _ => Origin::Tool,
                };
                if let Some(counts) = item.strip_prefix("folded literals: ") {
                    parse_counts(counts, &mut self.d.folded_literals);
                } else {
                    self.listed_literal(item, origin);
                }
            }
        }
    }

    /// An item under "Facts" or "Tool facts": a rendered statement, or a line a model wrote
    /// under the heading, read as a statement of unknown origin.
    fn fact_line(&mut self, current: PSec, item: &str) {
        if let Some(st) = statement(item, self.clock) {
            self.add_statement(st);
            return;
        }
        let origin = if current == PSec::Facts {
            Origin::Prose
        } else {
            Origin::Tool
        };
        self.add_statement(Statement {
            seq: None,
            origin,
            kind: StatementKind::Labelled,
            text: item.to_string(),
            replaces: None,
            recurring: None,
            short: None,
            group: None,
            last_seen: self.clock,
        });
    }

    /// A todo line; a later one for the same todo replaces it.
    fn todo_line(&mut self, item: &str) {
        let key = todo_key(item);
        match self.todo_at.get(&key) {
            Some(&i) => self.d.todos[i] = item.to_string(),
            None => {
                self.todo_at.insert(key, self.d.todos.len());
                self.d.todos.push(item.to_string());
            }
        }
        self.scan(item, Origin::Prose);
    }

    /// An operation line; the same line listed again adds its runs and exit codes to it.
    fn operation_line(&mut self, item: &str) {
        let op = Operation::parse_line(item, self.clock);
        if op.variants == 1 {
            self.scan(&op.line, Origin::Prose);
        }
        match self.d.operations.iter_mut().find(|o| o.line == op.line) {
            Some(o) => {
                o.count += op.count;
                for (c, n) in op.exits {
                    *o.exits.entry(c).or_default() += n;
                }
                o.last_seen = op.last_seen;
            }
            None => self.d.operations.push(op),
        }
    }

    fn section(&mut self, heading: &str) -> PSec {
        let name = heading.trim().trim_end_matches([':', '：']).trim();
        let lower = name.to_lowercase();
        match lower.as_str() {
            "goal" | "goals" | "objective" | "task" | "目标" | "任务" => PSec::Goal,
            "todo" | "todos" | "to do" | "todo state" | "待办" | "待办事项" => PSec::Todo,
            "decisions" | "decision" | "key decisions" | "决定" | "关键决定" | "决策" => {
                PSec::Decisions
            }
            "constraints" | "constraint" | "约束" | "限制" => PSec::Constraints,
            "facts" | "statements" | "事实" => PSec::Facts,
            "tool facts" => PSec::ToolFacts,
            "operations" | "tool operations" | "操作" => PSec::Ops,
            "user literals" => PSec::UserLits,
            "literals" | "字面量" => PSec::Lits,
            "tool literals" => PSec::ToolLits,
            _ => match self.d.notes.iter().position(|n| n.heading == name) {
                Some(i) => PSec::Note(i),
                None => {
                    self.d.notes.push(Note {
                        heading: name.to_string(),
                        lines: Vec::new(),
                    });
                    PSec::Note(self.d.notes.len() - 1)
                }
            },
        }
    }

    fn item(&mut self, list: &'static str, item: &str, origin: Origin) {
        let seen = self.seen.entry(list).or_default();
        if seen.insert(item.to_string()) {
            let target = match list {
                "goal" => &mut self.d.goal,
                "decisions" => &mut self.d.decisions,
                _ => &mut self.d.constraints,
            };
            target.push(item.to_string());
        }
        self.scan(item, origin);
    }

    /// A statement read back; its literals are known literals too.
    fn add_statement(&mut self, st: Statement) {
        let origin = st.origin;
        let key = format!("{:?}\u{0}{}", st.seq, st.text);
        if !self.seen.entry("statements").or_default().insert(key) {
            return;
        }
        let text = st.text.clone();
        self.d.statements.push(st);
        self.scan(&text, origin);
    }

    fn scan(&mut self, text: &str, origin: Origin) {
        let mut found = Vec::new();
        scan_literals(text, true, &mut |t, k| found.push((t.to_string(), k)));
        for (t, k) in found {
            self.add_literal(t, k, origin, None);
        }
    }

    /// A literal listed on its own line; an old-style line of several, separated by ", ", is
    /// split when every part is a literal by itself.
    fn listed_literal(&mut self, item: &str, origin: Origin) {
        if item.contains(", ") {
            let parts: Vec<&str> = item.split(", ").collect();
            let kinds: Vec<Option<LiteralKind>> = parts.iter().map(|p| classify_whole(p)).collect();
            if kinds.iter().all(Option::is_some) {
                for (p, k) in parts.into_iter().zip(kinds) {
                    let kind = k.unwrap_or(LiteralKind::Id);
                    self.add_literal(p.to_string(), kind, origin, None);
                }
                return;
            }
        }
        let kind = classify_whole(item).unwrap_or(LiteralKind::Quoted);
        self.add_literal(item.to_string(), kind, origin, None);
    }

    fn add_literal(
        &mut self,
        text: String,
        kind: LiteralKind,
        origin: Origin,
        group: Option<String>,
    ) {
        match self.lit_at.get(&text) {
            Some(&i) => {
                let l = &mut self.d.literals[i];
                if origin < l.origin {
                    l.group = None;
                }
                l.origin = l.origin.min(origin);
                if l.origin == Origin::Tool && group.is_some() {
                    l.group = group;
                }
                l.last_seen = self.clock;
            }
            None => {
                self.lit_at.insert(text.clone(), self.d.literals.len());
                self.d.literals.push(Literal {
                    text,
                    kind,
                    origin,
                    last_seen: self.clock,
                    group: if origin == Origin::Tool { group } else { None },
                });
            }
        }
    }
}

/// A rendered statement, `(seq 12, user) the churn window is 45 days (replaces 30 days)`:
/// `None` when the line does not start with such a citation.
fn statement(item: &str, clock: u64) -> Option<Statement> {
    let rest = item.strip_prefix('(')?;
    let (cite, body) = rest.split_once(") ")?;
    let (seq, who) = match cite.strip_prefix("seq ") {
        Some(c) => {
            let (n, who) = c.split_once(", ")?;
            (Some(n.trim().parse::<i64>().ok()?), who.trim())
        }
        None => (None, cite.trim()),
    };
    let origin = match who {
        "user" => Origin::User,
        "assistant" => Origin::Prose,
        "tool" => Origin::Tool,
        _ => return None,
    };
    let (text, replaces) = split_note(body.trim());
    let (text, stated, variants) = split_grouped(text);
    let recurring = (variants > 1).then_some((stated, variants));
    let kind = match origin {
        Origin::User => StatementKind::Stated,
        Origin::Prose if restates(text) => StatementKind::Restated,
        _ if text.contains("; ") => StatementKind::Row,
        _ => StatementKind::Labelled,
    };
    Some(Statement {
        seq,
        origin,
        kind,
        text: text.to_string(),
        replaces: replaces.map(str::to_string),
        recurring,
        short: None,
        group: None,
        last_seen: clock,
    })
}

/// A Markdown heading (`#` to `####`) or a line that is only bold text, as models write them.
fn heading(line: &str) -> Option<&str> {
    let t = line.trim();
    let hashes = t.bytes().take_while(|&b| b == b'#').count();
    if (1..=4).contains(&hashes) && t[hashes..].starts_with(' ') {
        let h = t[hashes..].trim().trim_matches('*').trim();
        return (!h.is_empty()).then_some(h);
    }
    if t.len() > 4 && t.starts_with("**") && t.ends_with("**") {
        let inner = t[2..t.len() - 2].trim().trim_end_matches([':', '：']);
        if !inner.is_empty() && !inner.contains("**") && inner.chars().count() <= 40 {
            return Some(inner);
        }
    }
    None
}

fn strip_bullet(item: &str) -> &str {
    for b in ["- ", "* ", "• ", "+ "] {
        if let Some(rest) = item.strip_prefix(b) {
            return rest.trim();
        }
    }
    let digits = item.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && digits <= 3 {
        let rest = &item[digits..];
        if let Some(r) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return r.trim();
        }
    }
    item
}

fn parse_counts(text: &str, into: &mut BTreeMap<String, u64>) {
    for part in text.split(", ") {
        if let Some((name, n)) = part.rsplit_once('×')
            && let Ok(n) = n.trim().parse::<u64>()
        {
            *into.entry(name.trim().to_string()).or_default() += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolCall;
    use crate::{Detail, Source, Speaker, src};

    #[test]
    fn parse_round_trips_rendered_text() {
        let calls: Vec<ToolCall> = (0..8)
            .map(|i| ToolCall {
                id: format!("c{i}"),
                name: "shell".into(),
                arguments: format!(r#"{{"cmd":"wc -l /data/part-{i}.csv"}}"#),
            })
            .collect();
        let mut sources = vec![
            src(
                Speaker::User,
                "Goal: ship v2 to /srv/app/v2.tar. Don't touch prod.",
            ),
            src(Speaker::Assistant, "Decision: use ACC-9."),
            src(
                Speaker::Assistant,
                "The log says 2026-11-03 14:05 UTC and 12.5 ms.",
            ),
        ];
        for (i, c) in calls.iter().enumerate() {
            sources.push(Source {
                role: Speaker::Assistant,
                content: "",
                tool_calls: std::slice::from_ref(c),
                tool_call_id: None,
                seq: None,
            });
            sources.push(Source {
                role: Speaker::Tool,
                content: if i % 3 == 0 {
                    "exit 1\nnope"
                } else {
                    "exit 0\n42"
                },
                tool_calls: &[],
                tool_call_id: Some(&c.id),
                seq: None,
            });
        }
        let d = Digest::from_sources(sources);
        for detail in [Detail::Standard, Detail::Deep, Detail::Folded] {
            let text = d.render(detail);
            let back = Digest::parse(&text);
            assert_eq!(back.render(detail), text, "{detail:?}");
        }
        let text = d.render(Detail::Standard);
        assert!(text.contains("×8 (8 variants) → exit 0×5, 1×3"), "{text}");
        let mut a = Digest::parse(&d.render(Detail::Folded));
        a.merge(Digest::parse(&d.render(Detail::Folded)));
        assert_eq!(a.decisions.len(), 1);
    }

    #[test]
    fn parses_summaries_stored_in_the_old_format() {
        let old = "## Goal\n- Goal: reconcile ACC-12345.\n## Todo\n## Decisions\n- Decision: exclude batch 7.\n## Constraints\n- \"Never touch /workspace/raw\"\n## Operations\n- shell cmd=wc -l /a.csv → exit 2\n  | no such file\n- folded operations: read_file×3\n## Literals\n- https://x.example.com/a?b=1, 100 EUR, prompt-uuid-123\n";
        let d = Digest::parse(old);
        assert_eq!(d.operations[0].exits.get("2"), Some(&1));
        assert_eq!(d.folded_ops.get("read_file"), Some(&3));
        let texts: Vec<&str> = d.literals.iter().map(|l| l.text.as_str()).collect();
        for lit in [
            "https://x.example.com/a?b=1",
            "100 EUR",
            "prompt-uuid-123",
            "/a.csv",
        ] {
            assert!(texts.contains(&lit), "{lit} in {texts:?}");
        }
        let again = d.render(Detail::Deep);
        assert!(
            again.contains("- shell cmd=wc -l /a.csv → exit 2"),
            "{again}"
        );
        assert!(again.contains("read_file×3"));
    }

    #[test]
    fn model_written_sections_parse_as_notes() {
        let text = "## Goal\nReconcile Q3 for ACC-1.\n\n## Completed work\n- loaded /data/a.csv\n\n## Current state\nTotals match except 12.5 EUR.\n\n## Key decisions\n- Use the median.\n\n## Next step\nWrite the report.\n\n## Constraints\n- \"No PII\"\n";
        let d = Digest::parse(text);
        assert_eq!(d.goal, vec!["Reconcile Q3 for ACC-1."]);
        assert_eq!(d.decisions, vec!["Use the median."]);
        assert_eq!(d.constraints, vec!["\"No PII\""]);
        let headings: Vec<&str> = d.notes.iter().map(|n| n.heading.as_str()).collect();
        assert_eq!(
            headings,
            vec!["Completed work", "Current state", "Next step"]
        );
        let again = d.render(Detail::Deep);
        for keep in [
            "loaded /data/a.csv",
            "Totals match except 12.5 EUR.",
            "Write the report.",
            "## Next step",
        ] {
            assert!(again.contains(keep), "{keep} lost in\n{again}");
        }
    }
}
