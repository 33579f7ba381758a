//! Extracting a digest from history in one pass: the goal, todos, decisions, the user's
//! constraints, tool operations and every exact literal.

use std::collections::BTreeMap;

use super::cues::{Cues, is_todo, says_goal, sentences, todo_key};
use super::literals::{Literal, LiteralKind, Origin, scan_literals};
use super::operations::{exit_code, key_argument, shape_of};
use super::text::{FastMap, FastSet, first_lines, prefix_bytes, truncate};
use super::{Digest, GOAL_CHARS, LINE_CHARS, Operation, Source};
use crate::{Role, ToolCall};

const FIRST_LINES: usize = 3;

/// Sentences kept as decisions or constraints are cut here.
const SENTENCE_CHARS: usize = 600;

/// Only this much of a tool result is searched for literals and exit codes.
const TOOL_SCAN_BYTES: usize = 4_096;

impl Digest {
    /// Extracts a digest from history in seq order, starting at the conversation's beginning:
    /// the first user message is the goal.
    pub fn from_sources<'a>(sources: impl IntoIterator<Item = Source<'a>>) -> Digest {
        Builder::new(true).run(sources)
    }

    /// Extracts a digest from a later range of history: only a user message that says it is a
    /// goal ("Goal: ...", "目标：...") becomes one.
    pub fn from_continuation<'a>(sources: impl IntoIterator<Item = Source<'a>>) -> Digest {
        Builder::new(false).run(sources)
    }
}

/// Builds a digest from sources.
struct Builder {
    d: Digest,
    starts_conversation: bool,
    goal_taken: bool,
    clock: u64,
    seen_goal: FastSet<String>,
    /// Each decision and constraint kept, with when it was last stated (see `statements`).
    seen_decisions: FastMap<String, u64>,
    seen_constraints: FastMap<String, u64>,
    /// Counts decision and constraint statements, so each has a distinct time.
    statements: u64,
    todo_at: FastMap<String, usize>,
    op_at: FastMap<String, usize>,
    calls: FastMap<String, usize>,
    lit_at: FastMap<String, usize>,
    /// The shape of each operation, computed once.
    op_shapes: Vec<String>,
}

impl Builder {
    fn new(starts_conversation: bool) -> Self {
        Builder {
            d: Digest::default(),
            starts_conversation,
            goal_taken: false,
            clock: 0,
            seen_goal: FastSet::default(),
            seen_decisions: FastMap::default(),
            seen_constraints: FastMap::default(),
            statements: 0,
            todo_at: FastMap::default(),
            op_at: FastMap::default(),
            calls: FastMap::default(),
            lit_at: FastMap::default(),
            op_shapes: Vec::new(),
        }
    }

    fn run<'a>(mut self, sources: impl IntoIterator<Item = Source<'a>>) -> Digest {
        for s in sources {
            self.clock += 1;
            match s.role {
                Role::Tool => self.tool_result(s),
                role => {
                    self.prose(role, s.content);
                    for call in s.tool_calls {
                        self.tool_call(call);
                    }
                }
            }
        }
        // In the order of their last statement: an instruction stated again is current again,
        // and the newest of a group of variants is the one its line shows.
        let (decided, constrained) = (&self.seen_decisions, &self.seen_constraints);
        self.d
            .decisions
            .sort_by_key(|s| decided.get(s).copied().unwrap_or(0));
        self.d
            .constraints
            .sort_by_key(|s| constrained.get(s).copied().unwrap_or(0));
        self.d
    }

    fn tool_result(&mut self, s: Source<'_>) {
        let head = prefix_bytes(s.content, TOOL_SCAN_BYTES);
        let op = s.tool_call_id.and_then(|id| self.calls.get(id)).copied();
        if let Some(i) = op
            && let Some(o) = self.d.operations.get_mut(i)
        {
            if let Some(code) = exit_code(head) {
                *o.exits.entry(code).or_default() += 1;
            }
            o.first_lines = first_lines(head, FIRST_LINES)
                .into_iter()
                .map(|l| truncate(l, LINE_CHARS))
                .collect();
        }
        let group = op.and_then(|i| self.op_shapes.get(i).cloned());
        scan_literals(head, false, &mut |t, k| {
            self.literal(t, k, Origin::Tool, group.as_deref());
        });
    }

    fn tool_call(&mut self, call: &ToolCall) {
        let line = format!("{} {}", call.name, key_argument(&call.arguments));
        let i = match self.op_at.get(&line) {
            Some(&i) => {
                let o = &mut self.d.operations[i];
                o.count += 1;
                o.last_seen = self.clock;
                i
            }
            None => {
                let i = self.d.operations.len();
                self.op_at.insert(line.clone(), i);
                self.d.operations.push(Operation {
                    line: line.clone(),
                    count: 1,
                    variants: 1,
                    exits: BTreeMap::new(),
                    first_lines: Vec::new(),
                    last_seen: self.clock,
                });
                self.op_shapes.push(shape_of(&line));
                i
            }
        };
        self.calls.insert(call.id.clone(), i);
        let group = self.op_shapes.get(i).cloned();
        scan_literals(&line, false, &mut |t, k| {
            self.literal(t, k, Origin::Tool, group.as_deref());
        });
    }

    fn prose(&mut self, role: Role, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        let user = role == Role::User;
        let whole_goal = user && (self.starts_conversation && !self.goal_taken || says_goal(text));
        if user {
            self.goal_taken = true;
        }
        if whole_goal {
            let g = truncate(text.trim(), GOAL_CHARS);
            if self.seen_goal.insert(g.clone()) {
                self.d.goal.push(g);
            }
        }
        for sentence in sentences(text) {
            let sentence = sentence.trim();
            if sentence.is_empty() {
                continue;
            }
            if is_todo(sentence) {
                let key = todo_key(sentence);
                match self.todo_at.get(&key) {
                    Some(&i) => self.d.todos[i] = sentence.to_string(),
                    None => {
                        self.todo_at.insert(key, self.d.todos.len());
                        self.d.todos.push(sentence.to_string());
                    }
                }
                continue;
            }
            let cues = Cues::of(sentence);
            if !whole_goal && cues.goal {
                let g = truncate(sentence, SENTENCE_CHARS);
                if self.seen_goal.insert(g.clone()) {
                    self.d.goal.push(g);
                }
            } else if user && cues.constraint {
                let c = truncate(sentence, SENTENCE_CHARS);
                self.statements += 1;
                if self
                    .seen_constraints
                    .insert(c.clone(), self.statements)
                    .is_none()
                {
                    self.d.constraints.push(c);
                } else {
                    *self.d.stated.entry(c).or_insert(1) += 1;
                }
            } else if cues.decision {
                let c = truncate(sentence, SENTENCE_CHARS);
                self.statements += 1;
                if self
                    .seen_decisions
                    .insert(c.clone(), self.statements)
                    .is_none()
                {
                    self.d.decisions.push(c);
                } else {
                    *self.d.stated.entry(c).or_insert(1) += 1;
                }
            }
        }
        let origin = if user { Origin::User } else { Origin::Prose };
        scan_literals(text, true, &mut |t, k| self.literal(t, k, origin, None));
    }

    fn literal(&mut self, text: &str, kind: LiteralKind, origin: Origin, group: Option<&str>) {
        match self.lit_at.get(text) {
            Some(&i) => {
                let l = &mut self.d.literals[i];
                l.last_seen = self.clock;
                if origin < l.origin {
                    l.origin = origin;
                    l.group = None;
                } else if origin == Origin::Tool && l.origin == Origin::Tool {
                    // Rendered under the operation that printed it last.
                    l.group = group.map(str::to_string);
                }
            }
            None => {
                self.lit_at.insert(text.to_string(), self.d.literals.len());
                self.d.literals.push(Literal {
                    text: text.to_string(),
                    kind,
                    origin,
                    last_seen: self.clock,
                    group: if origin == Origin::Tool {
                        group.map(str::to_string)
                    } else {
                        None
                    },
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::extract::{Detail, src};

    #[test]
    fn keeps_goal_todos_decisions_constraints_and_literals() {
        let calls = vec![ToolCall {
            id: "c1".into(),
            name: "shell".into(),
            arguments: r#"{"cmd":"wc -l /workspace/a.csv"}"#.into(),
            signature: None,
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
        assert_eq!(
            d.goal,
            vec!["Goal: reconcile ACC-12345 above 100 EUR. Be careful."],
            "the goal message is kept whole"
        );
        assert_eq!(d.todos, vec!["TODO: check totals", "- [x] load data"]);
        assert_eq!(d.decisions.len(), 2);
        assert_eq!(
            d.constraints,
            vec!["Remember: \"Never touch /workspace/raw\"."]
        );
        assert_eq!(d.operations[0].exits.get("2"), Some(&1));
        for lit in [
            "ACC-12345",
            "100 EUR",
            "\"Never touch /workspace/raw\"",
            "https://x.example.com/a?b=1",
            "prompt-uuid-123",
            "/workspace/a.csv",
        ] {
            assert!(
                d.literals.iter().any(|l| l.text == lit),
                "{lit} in {:?}",
                d.literals
            );
        }
        let text = d.render(Detail::Standard);
        assert!(
            text.contains("- shell cmd=wc -l /workspace/a.csv → exit 2"),
            "{text}"
        );
        assert!(text.contains("  | no such file"));
        let deep = d.render(Detail::Deep);
        assert!(!deep.contains("  | no such file"));
        let folded = d.render(Detail::Folded);
        for lit in &d.literals {
            for t in [&text, &deep, &folded] {
                assert!(t.contains(lit.text.as_str()), "{} lost in\n{t}", lit.text);
            }
        }
        assert_eq!(d.render(Detail::Standard), text, "deterministic");
    }

    #[test]
    fn later_ranges_do_not_take_a_user_message_as_the_goal() {
        let d = Digest::from_continuation([src(Role::User, "Remember to check 12.5 ms.")]);
        assert!(d.goal.is_empty());
        let d = Digest::from_continuation([src(Role::User, "New goal: find the 0.8375 cut.")]);
        assert_eq!(d.goal.len(), 1);
    }
}
