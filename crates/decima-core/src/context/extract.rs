//! The `extract` strategy: a summary written by rules, without an LLM.
//!
//! It keeps what an agent cannot afford to lose: the goal (the whole message), the todo state,
//! the decisions, the user's constraints, tool digests (distinct commands grouped with counts
//! and exit codes) and the exact literals people paste (numbers with decimals or units, hosts and
//! ports, URLs, e-mail addresses, hashes, versions, dates and times, ticket ids, quoted and
//! backticked tokens, paths). The output has fixed section headings and parses back into a
//! [`Digest`], which is how summaries of summaries keep what they fold; model-written summaries
//! parse too, their unknown sections kept as notes.
//!
//! Rendering fills a token budget by priority (see [`Digest::render_budgeted`]): the goal,
//! constraints, decisions and the user's literals first, then todos and recent operations,
//! notes, the other literals newest first, and the remaining detail. What does not fit is
//! folded into counts ("shell×12", "path×30"), never silently dropped.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::{Message, Role, TokenCounter, ToolCall};

/// One piece of history to summarise: a message, or a step record dressed as one.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// Who said it; constraints are only taken from the user, and the user's literals are kept
    /// before any other.
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

/// How much detail a rendered digest keeps at most. A budget can always cut it further (by
/// priority); a deeper detail is shorter even without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Detail {
    /// Standard compression: everything, and the first lines of the last 3 operations.
    Standard,
    /// Deep compression: one line per distinct operation, no result lines.
    Deep,
    /// Folded again: the most recent operations only (the rest as counts per tool), notes cut
    /// to their first 200 characters.
    Folded,
}

/// What kind of exact literal a token is; used to fold dropped literals into counts per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LiteralKind {
    /// A number with decimals, a unit, a currency, a percent sign or many digits.
    Number,
    /// An IPv4 or IPv6 address, or a host with a port.
    Address,
    /// A URL of any scheme.
    Url,
    /// An e-mail address.
    Email,
    /// A hexadecimal hash (commit, sha256, ...).
    Hash,
    /// A semantic version.
    Version,
    /// A date, a time, or both, with its zone.
    Time,
    /// A ticket or issue id (ABC-1234, #1234).
    Ticket,
    /// A quoted or backticked span, quotes included.
    Quoted,
    /// A file path (unix, home, Windows) or a file name.
    Path,
    /// Any other identifier: UUIDs, mixed letters and digits, dotted or snake_case names.
    Id,
}

impl LiteralKind {
    /// The short name used in the "folded literals" line.
    pub fn as_str(self) -> &'static str {
        match self {
            LiteralKind::Number => "number",
            LiteralKind::Address => "address",
            LiteralKind::Url => "url",
            LiteralKind::Email => "email",
            LiteralKind::Hash => "hash",
            LiteralKind::Version => "version",
            LiteralKind::Time => "time",
            LiteralKind::Ticket => "ticket",
            LiteralKind::Quoted => "quoted",
            LiteralKind::Path => "path",
            LiteralKind::Id => "id",
        }
    }
}

/// Where a literal was stated, best first: this is the order in which literals are kept when
/// the budget is short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// Stated by the user: never dropped while anything less important is kept.
    User,
    /// Written by the assistant, or an argument of a one-off tool call.
    Prose,
    /// Printed by a tool, or an argument of a tool call: kept fairly across operations, so
    /// one noisy operation cannot crowd out the others.
    Tool,
}

/// One exact literal with what decides whether it is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    /// The text, verbatim.
    pub text: String,
    /// What it is.
    pub kind: LiteralKind,
    /// The best place it was stated.
    pub origin: Origin,
    /// When it was last seen (larger is more recent); newer literals are kept first.
    pub last_seen: u64,
    /// For a literal from a tool call or result: the shape of that operation (see
    /// [`Operation::line`]), under which it is rendered.
    pub group: Option<String>,
}

/// Model-written content under a heading the extract strategy does not use itself (e.g. the
/// "Completed work" and "Next step" sections of an `llm` summary), kept when folding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The heading as written.
    pub heading: String,
    /// Its lines, bullets removed, in order.
    pub lines: Vec<String>,
}

/// One distinct tool operation, or a group of near-identical ones, with how often it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// Tool name and key argument, e.g. `shell cmd=wc -l /data/a.csv`; for a group of
    /// near-identical commands, the shared shape with `*` where they differ.
    pub line: String,
    /// How many times it ran.
    pub count: u64,
    /// How many distinct commands the line stands for (1 for an exact command).
    pub variants: u64,
    /// Exit codes seen, with how many runs reported each.
    pub exits: BTreeMap<String, u64>,
    /// The first lines of the latest result.
    pub first_lines: Vec<String>,
    /// When it last ran (larger is more recent).
    pub last_seen: u64,
}

impl Operation {
    fn tool(&self) -> &str {
        self.line.split_whitespace().next().unwrap_or("tool")
    }

    fn render_line(&self) -> String {
        let mut out = format!("- {}", one_line(&self.line));
        if self.count > 1 {
            out.push_str(&format!(" ×{}", self.count));
        }
        if self.variants > 1 {
            out.push_str(&format!(" ({} variants)", self.variants));
        }
        if !self.exits.is_empty() {
            out.push_str(" → exit ");
            let only_code = self.exits.len() == 1 && self.exits.values().all(|&n| n == self.count);
            if only_code {
                out.push_str(self.exits.keys().next().map_or("", String::as_str));
            } else {
                let parts: Vec<String> =
                    self.exits.iter().map(|(c, n)| format!("{c}×{n}")).collect();
                out.push_str(&parts.join(", "));
            }
        }
        out.push('\n');
        out
    }

    /// Parses a line written by [`Operation::render_line`] (without the bullet), or an older
    /// `line → exit N` line.
    fn parse_line(item: &str, last_seen: u64) -> Operation {
        let (head, exit) = match item.rsplit_once(" → exit ") {
            Some((h, e)) => (h, Some(e)),
            None => (item, None),
        };
        let (head, variants) = match head
            .strip_suffix(" variants)")
            .and_then(|h| h.rsplit_once(" ("))
        {
            Some((h, v)) => match v.parse::<u64>() {
                Ok(v) => (h, v.max(1)),
                Err(_) => (head, 1),
            },
            None => (head, 1),
        };
        let (line, count) = match head.rsplit_once(" ×") {
            Some((h, n)) => match n.parse::<u64>() {
                Ok(n) => (h, n.max(1)),
                Err(_) => (head, 1),
            },
            None => (head, 1),
        };
        let mut exits = BTreeMap::new();
        if let Some(e) = exit {
            let parts: Vec<&str> = e.split(", ").collect();
            if parts.len() == 1 && !parts[0].contains('×') {
                exits.insert(parts[0].trim().to_string(), count);
            } else {
                for p in parts {
                    match p.rsplit_once('×') {
                        Some((code, n)) => {
                            exits.insert(code.to_string(), n.parse().unwrap_or(1));
                        }
                        None => {
                            exits.insert(p.to_string(), 1);
                        }
                    }
                }
            }
        }
        Operation {
            line: line.to_string(),
            count,
            variants,
            exits,
            first_lines: Vec::new(),
            last_seen,
        }
    }
}

/// What the extract strategy keeps from a range of history, before it is rendered as text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Digest {
    /// Goal statements: the whole opening user message, and any later "Goal: ..." message.
    pub goal: Vec<String>,
    /// Todo items, latest state of each.
    pub todos: Vec<String>,
    /// Decision sentences, in order.
    pub decisions: Vec<String>,
    /// The user's constraint sentences, in order.
    pub constraints: Vec<String>,
    /// Model-written sections the extract strategy has no heading for.
    pub notes: Vec<Note>,
    /// Distinct tool operations, in order of first run.
    pub operations: Vec<Operation>,
    /// Operations already folded into counts, per tool.
    pub folded_ops: BTreeMap<String, u64>,
    /// Every exact literal seen, in first-seen order.
    pub literals: Vec<Literal>,
    /// Literals already folded into counts, per kind.
    pub folded_literals: BTreeMap<String, u64>,
}

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
/// Result lines kept for the most recent operations (standard detail).
const DETAILED_OPS: usize = 3;
const FIRST_LINES: usize = 3;
const LINE_CHARS: usize = 160;
/// Sentences kept as decisions or constraints are cut here.
const SENTENCE_CHARS: usize = 600;
/// The goal message is kept whole up to this many characters (its literals are kept anyway).
const GOAL_CHARS: usize = 6_000;
/// The shorter renderings of a goal when its whole text would take more than half the budget.
const GOAL_SHORT: [usize; 3] = [1_200, 300, 100];
/// Shorter renderings of decisions, constraints and notes under a tight budget.
const ITEM_SHORT: usize = 200;
/// Only this much of a tool result is searched for literals and exit codes.
const TOOL_SCAN_BYTES: usize = 4_096;
/// Groups of more near-identical commands than this become one line with `*`.
const MAX_VARIANT_LINES: u64 = 3;
/// Operation lines ranked with the todos, before notes and literals.
const RECENT_OPS: usize = 12;
/// Operation lines shown individually at folded detail.
const FOLDED_OPS: usize = 5;

/// Renders the extract summary of messages at the given detail.
pub fn extract_messages(messages: &[Message], detail: Detail) -> String {
    Digest::from_sources(messages.iter().map(Source::from)).render(detail)
}

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

    /// The literals a model-written summary must carry, in first-seen order: all those the
    /// user or the agent stated, and the newest few each tool operation printed.
    pub fn literal_texts(&self) -> Vec<String> {
        let mut per_group: HashMap<Option<&str>, Vec<(u64, usize)>> = HashMap::new();
        for (i, l) in self.literals.iter().enumerate() {
            if l.origin == Origin::Tool {
                per_group
                    .entry(l.group.as_deref())
                    .or_default()
                    .push((l.last_seen, i));
            }
        }
        let mut keep: HashSet<usize> = HashSet::new();
        for mut v in per_group.into_values() {
            v.sort_unstable_by(|a, b| b.cmp(a));
            keep.extend(v.into_iter().take(3).map(|(_, i)| i));
        }
        self.literals
            .iter()
            .enumerate()
            .filter(|(i, l)| l.origin != Origin::Tool || keep.contains(i))
            .map(|(_, l)| l.text.clone())
            .collect()
    }

    /// Parses a rendered digest back, so a summary can be folded again without losing what it
    /// kept. Model-written summaries parse too: known headings map onto the digest's lists,
    /// plain lines count as items, and unknown headings (and text before any heading) are kept
    /// as notes. Literals are re-extracted from the kept text and taken verbatim from the
    /// literal sections.
    pub fn parse(text: &str) -> Digest {
        Parser::default().run(text)
    }

    fn clock(&self) -> u64 {
        let lits = self.literals.iter().map(|l| l.last_seen).max().unwrap_or(0);
        let ops = self
            .operations
            .iter()
            .map(|o| o.last_seen)
            .max()
            .unwrap_or(0);
        lits.max(ops)
    }

    /// Appends a later digest to this one: items are deduplicated, todos keep their latest
    /// state, operations and literals seen in both are combined, and the later digest's
    /// literals and operations count as more recent.
    pub fn merge(&mut self, later: Digest) {
        let offset = self.clock() + 1;
        let mut goals: HashSet<String> = self.goal.iter().cloned().collect();
        for g in later.goal {
            if goals.insert(g.clone()) {
                self.goal.push(g);
            }
        }
        let mut todo_at: HashMap<String, usize> = self
            .todos
            .iter()
            .enumerate()
            .map(|(i, t)| (todo_key(t), i))
            .collect();
        for t in later.todos {
            let key = todo_key(&t);
            match todo_at.get(&key) {
                Some(&i) => self.todos[i] = t,
                None => {
                    todo_at.insert(key, self.todos.len());
                    self.todos.push(t);
                }
            }
        }
        merge_unique(&mut self.decisions, later.decisions);
        merge_unique(&mut self.constraints, later.constraints);
        for note in later.notes {
            match self.notes.iter_mut().find(|n| n.heading == note.heading) {
                Some(n) => merge_unique(&mut n.lines, note.lines),
                None => self.notes.push(note),
            }
        }
        let mut op_at: HashMap<String, usize> = self
            .operations
            .iter()
            .enumerate()
            .map(|(i, o)| (o.line.clone(), i))
            .collect();
        for mut op in later.operations {
            op.last_seen += offset;
            match op_at.get(&op.line) {
                Some(&i) => {
                    let mine = &mut self.operations[i];
                    mine.count += op.count;
                    if op.variants > 1 || mine.variants > 1 {
                        mine.variants += op.variants;
                    }
                    for (code, n) in op.exits {
                        *mine.exits.entry(code).or_default() += n;
                    }
                    if !op.first_lines.is_empty() {
                        mine.first_lines = op.first_lines;
                    }
                    mine.last_seen = op.last_seen;
                }
                None => {
                    op_at.insert(op.line.clone(), self.operations.len());
                    self.operations.push(op);
                }
            }
        }
        for (tool, n) in later.folded_ops {
            *self.folded_ops.entry(tool).or_default() += n;
        }
        let mut lit_at: HashMap<String, usize> = self
            .literals
            .iter()
            .enumerate()
            .map(|(i, l)| (l.text.clone(), i))
            .collect();
        for mut lit in later.literals {
            lit.last_seen += offset;
            match lit_at.get(&lit.text) {
                Some(&i) => {
                    let mine = &mut self.literals[i];
                    if lit.origin < mine.origin {
                        mine.group = lit.group;
                    } else if lit.origin == mine.origin && lit.group.is_some() {
                        mine.group = lit.group.or(mine.group.take());
                    }
                    mine.origin = mine.origin.min(lit.origin);
                    if mine.origin != Origin::Tool {
                        mine.group = None;
                    }
                    mine.last_seen = lit.last_seen;
                }
                None => {
                    lit_at.insert(lit.text.clone(), self.literals.len());
                    self.literals.push(lit);
                }
            }
        }
        for (kind, n) in later.folded_literals {
            *self.folded_literals.entry(kind).or_default() += n;
        }
    }

    /// Renders the whole digest at `detail`, with fixed section headings; empty sections are
    /// left out. Every literal appears: those the kept prose does not carry are listed.
    pub fn render(&self, detail: Detail) -> String {
        self.layout(detail, None, None)
    }

    /// Renders the digest at `detail` within `max_tokens` (counted as one message by
    /// `counter`, as [`crate::context::fold::summary_tokens`] does), filling the budget by
    /// priority: the goal (whole while it takes at most half the budget), constraints,
    /// decisions and the user's literals; then todos and the most recent operations; notes;
    /// the literals the agent stated, newest first; the literals tools printed, shared
    /// round-robin between operations (newest first within each, shown under their
    /// operation); the remaining operations and the result lines. What does not fit is folded
    /// into counts. Returns the text and its tokens; the tokens exceed `max_tokens` only when
    /// even an empty text does.
    pub fn render_budgeted(
        &self,
        detail: Detail,
        max_tokens: u32,
        counter: &dyn TokenCounter,
    ) -> (String, u32) {
        let (text, tokens, _) = self.fit(detail, max_tokens, counter, false);
        (text, tokens)
    }

    /// Like [`Digest::render_budgeted`], but what does not fit is returned as a digest instead
    /// of being folded into counts, so it can go into another summary (the new segment, when
    /// older summaries fold into the global one) rather than be lost.
    pub fn render_budgeted_spill(
        &self,
        detail: Detail,
        max_tokens: u32,
        counter: &dyn TokenCounter,
    ) -> (String, u32, Digest) {
        self.fit(detail, max_tokens, counter, true)
    }

    fn fit(
        &self,
        detail: Detail,
        max_tokens: u32,
        counter: &dyn TokenCounter,
        spill: bool,
    ) -> (String, u32, Digest) {
        let cost = |text: &str| {
            counter
                .count_text(text)
                .saturating_add(counter.message_overhead())
        };
        let mut dropped = HashSet::new();
        let full = self.layout(detail, None, spill.then_some(&mut dropped));
        let full_tokens = cost(&full);
        if full_tokens <= max_tokens {
            return (full, full_tokens, self.leftover(&dropped));
        }
        let overhead = counter.message_overhead();
        let mut room = max_tokens.saturating_sub(overhead);
        for attempt in 0..9 {
            if attempt == 8 {
                room = 0;
            }
            dropped.clear();
            let text = self.layout(detail, Some((room, counter)), spill.then_some(&mut dropped));
            let tokens = cost(&text);
            if tokens <= max_tokens {
                return (text, tokens, self.leftover(&dropped));
            }
            // The counter is not additive over lines (a real tokenizer can merge across them):
            // shrink by the excess and try again.
            let excess = tokens - max_tokens;
            room = room.saturating_sub(excess.max(room / 16).max(1));
        }
        // Even the headings do not fit: send nothing rather than exceed the budget.
        let rest = if spill {
            self.clone()
        } else {
            Digest::default()
        };
        (String::new(), cost(""), rest)
    }

    /// The items a layout left out, as a digest in their original order.
    fn leftover(&self, dropped: &HashSet<Src>) -> Digest {
        if dropped.is_empty() {
            return Digest::default();
        }
        let pick = |list: &[String], f: fn(usize) -> Src| -> Vec<String> {
            list.iter()
                .enumerate()
                .filter(|(i, _)| dropped.contains(&f(*i)))
                .map(|(_, x)| x.clone())
                .collect()
        };
        let mut ops: Vec<usize> = dropped
            .iter()
            .filter_map(|s| match s {
                Src::Ops(v) => Some(v.iter().copied()),
                _ => None,
            })
            .flatten()
            .collect();
        ops.sort_unstable();
        ops.dedup();
        Digest {
            goal: pick(&self.goal, Src::Goal),
            todos: pick(&self.todos, Src::Todo),
            decisions: pick(&self.decisions, Src::Decision),
            constraints: pick(&self.constraints, Src::Constraint),
            notes: self
                .notes
                .iter()
                .enumerate()
                .map(|(ni, n)| Note {
                    heading: n.heading.clone(),
                    lines: n
                        .lines
                        .iter()
                        .enumerate()
                        .filter(|(li, _)| dropped.contains(&Src::Note(ni, *li)))
                        .map(|(_, l)| l.clone())
                        .collect(),
                })
                .filter(|n| !n.lines.is_empty())
                .collect(),
            operations: ops
                .into_iter()
                .filter_map(|i| self.operations.get(i).cloned())
                .collect(),
            folded_ops: BTreeMap::new(),
            literals: self
                .literals
                .iter()
                .enumerate()
                .filter(|(i, _)| dropped.contains(&Src::Literal(*i)))
                .map(|(_, l)| l.clone())
                .collect(),
            folded_literals: BTreeMap::new(),
        }
    }

    /// Lays the digest out; with a limit, chooses items by priority until `room` tokens are
    /// used (estimated per line, headings included) and folds the rest into counts, or, with
    /// `spill`, records what was left out there instead.
    fn layout(
        &self,
        detail: Detail,
        limit: Option<(u32, &dyn TokenCounter)>,
        mut spill: Option<&mut HashSet<Src>>,
    ) -> String {
        let cands = self.candidates(detail);
        let mut chosen: Vec<Option<usize>> = vec![None; cands.len()];
        let mut open: HashSet<Sec> = HashSet::new();
        let mut present: HashSet<String> = HashSet::new();
        let mut folded_ops = self.folded_ops.clone();
        let mut folded_lits = self.folded_literals.clone();
        let mut goal_texts: Vec<String> = Vec::new();
        let (budget, counter) = match limit {
            Some((room, counter)) => {
                let reserve = self.fold_reserve(&cands, counter);
                (Some(room.saturating_sub(reserve)), Some(counter))
            }
            None => (None, None),
        };
        let mut used: u32 = 0;
        let mut goal_used: u32 = 0;
        for ci in 0..cands.len() {
            let cand = &cands[ci];
            if chosen[ci].is_some() {
                continue;
            }
            if let CandKind::Literal(i) = cand.kind
                && present.contains(&self.literals[i].text)
            {
                continue;
            }
            if let CandKind::Contained = cand.kind
                && goal_texts.iter().any(|g| g.contains(cand.plain.as_str()))
            {
                // A constraint or decision stated in the goal message, kept with the goal.
                continue;
            }
            // Lines under an operation row need the row: its cost joins theirs.
            let parent = cand.parent.filter(|&p| chosen[p].is_none());
            let mut pick: Option<(usize, Option<usize>)> = None;
            match (budget, counter) {
                (Some(budget), Some(counter)) => {
                    let heading = |sec: Sec, open: &HashSet<Sec>| {
                        if open.contains(&sec) {
                            0
                        } else {
                            counter.count_text(&self.heading_line(sec))
                        }
                    };
                    let parent_cost = match parent {
                        Some(p) => match cands[p].texts.last() {
                            Some(t) => counter
                                .count_text(t)
                                .saturating_add(heading(cands[p].sec, &open)),
                            None => u32::MAX,
                        },
                        None => 0,
                    };
                    let own_heading = if parent.is_some_and(|p| cands[p].sec == cand.sec) {
                        0
                    } else {
                        heading(cand.sec, &open)
                    };
                    for (vi, text) in cand.texts.iter().enumerate() {
                        let c = counter
                            .count_text(text)
                            .saturating_add(own_heading)
                            .saturating_add(parent_cost);
                        let within_goal_cap = !matches!(cand.kind, CandKind::Goal)
                            || vi + 1 == cand.texts.len()
                            || goal_used.saturating_add(c) <= budget / 2;
                        if within_goal_cap && used.saturating_add(c) <= budget {
                            used += c;
                            if matches!(cand.kind, CandKind::Goal) {
                                goal_used += c;
                            }
                            let pv = parent.map(|p| cands[p].texts.len().saturating_sub(1));
                            pick = Some((vi, pv));
                            break;
                        }
                    }
                }
                _ => {
                    if !cand.texts.is_empty() {
                        pick = Some((0, parent.map(|_| 0)));
                    }
                }
            }
            match pick {
                Some((vi, pv)) => {
                    if let (Some(p), Some(pv)) = (parent, pv) {
                        self.take(&cands[p], pv, &mut present, &mut goal_texts, &mut open);
                        chosen[p] = Some(pv);
                    }
                    self.take(cand, vi, &mut present, &mut goal_texts, &mut open);
                    chosen[ci] = Some(vi);
                }
                None if spill.is_some() => {
                    if let Some(dropped) = spill.as_deref_mut()
                        && cand.src != Src::None
                    {
                        dropped.insert(cand.src.clone());
                    }
                }
                None => match cand.kind {
                    CandKind::Literal(i) => {
                        let kind = self.literals[i].kind.as_str().to_string();
                        *folded_lits.entry(kind).or_default() += 1;
                    }
                    CandKind::Op(ref tool, n) => {
                        *folded_ops.entry(tool.clone()).or_default() += n;
                    }
                    _ => {}
                },
            }
        }
        let mut picked: Vec<(Sec, (u64, u64), &str)> = cands
            .iter()
            .zip(&chosen)
            .filter_map(|(c, v)| v.map(|v| (c.sec, c.key, c.texts[v].as_str())))
            .collect();
        picked.sort_by_key(|a| (a.0, a.1));
        let last_literal_sec = picked
            .iter()
            .map(|c| c.0)
            .filter(|s| matches!(s, Sec::UserLiterals | Sec::Literals | Sec::ToolLiterals))
            .max();
        let mut out = String::new();
        let mut current: Option<Sec> = None;
        let mut ops_done = false;
        let mut lits_done = false;
        let close = |sec: Sec, out: &mut String, ops_done: &mut bool, lits_done: &mut bool| {
            if sec == Sec::Operations && !folded_ops.is_empty() {
                out.push_str(&folded_ops_line(&folded_ops));
                *ops_done = true;
            }
            if Some(sec) == last_literal_sec && !folded_lits.is_empty() {
                out.push_str(&folded_lits_line(&folded_lits));
                *lits_done = true;
            }
        };
        for (sec, _, text) in &picked {
            if current != Some(*sec) {
                if let Some(prev) = current {
                    close(prev, &mut out, &mut ops_done, &mut lits_done);
                }
                if *sec > Sec::Operations && !ops_done && !folded_ops.is_empty() {
                    out.push_str("## Operations\n");
                    out.push_str(&folded_ops_line(&folded_ops));
                    ops_done = true;
                }
                out.push_str(&self.heading_line(*sec));
                current = Some(*sec);
            }
            out.push_str(text);
        }
        if let Some(prev) = current {
            close(prev, &mut out, &mut ops_done, &mut lits_done);
        }
        if !ops_done && !folded_ops.is_empty() {
            out.push_str("## Operations\n");
            out.push_str(&folded_ops_line(&folded_ops));
        }
        if !lits_done && !folded_lits.is_empty() {
            out.push_str("## Literals\n");
            out.push_str(&folded_lits_line(&folded_lits));
        }
        out
    }

    /// Records a chosen rendering: its section opens, its literals count as present, and a goal
    /// is remembered so constraints inside it are not repeated.
    fn take(
        &self,
        cand: &Cand,
        variant: usize,
        present: &mut HashSet<String>,
        goal_texts: &mut Vec<String>,
        open: &mut HashSet<Sec>,
    ) {
        let text = &cand.texts[variant];
        if cand.scan {
            scan_literals(text, true, &mut |lit, _| {
                present.insert(lit.to_string());
            });
        }
        if matches!(cand.kind, CandKind::Goal) {
            goal_texts.push(text.clone());
        }
        open.insert(cand.sec);
    }

    /// Tokens set aside for the "folded" lines, at their largest.
    fn fold_reserve(&self, cands: &[Cand], counter: &dyn TokenCounter) -> u32 {
        let mut ops = self.folded_ops.clone();
        let mut lits = self.folded_literals.clone();
        for c in cands {
            match &c.kind {
                CandKind::Op(tool, n) => *ops.entry(tool.clone()).or_default() += n,
                CandKind::Literal(i) => {
                    *lits
                        .entry(self.literals[*i].kind.as_str().to_string())
                        .or_default() += 1
                }
                _ => {}
            }
        }
        let mut reserve = 0;
        if !ops.is_empty() {
            reserve += counter.count_text(&format!("## Operations\n{}", folded_ops_line(&ops)));
        }
        if !lits.is_empty() {
            reserve += counter.count_text(&format!("## Literals\n{}", folded_lits_line(&lits)));
        }
        reserve
    }

    fn heading_line(&self, sec: Sec) -> String {
        let name = match sec {
            Sec::Goal => "Goal",
            Sec::Todo => "Todo",
            Sec::Decisions => "Decisions",
            Sec::Constraints => "Constraints",
            Sec::Note(i) => self.notes.get(i).map_or("Notes", |n| n.heading.as_str()),
            Sec::Operations => "Operations",
            Sec::UserLiterals => "User literals",
            Sec::Literals => "Literals",
            Sec::ToolLiterals => "Tool literals",
        };
        format!("## {name}\n")
    }

    /// Every renderable item, in priority order.
    fn candidates(&self, detail: Detail) -> Vec<Cand> {
        let mut out = Vec::new();
        // Tier A: goal, constraints, decisions, the user's literals.
        for (i, g) in self.goal.iter().enumerate() {
            let whole = truncate(g, GOAL_CHARS);
            let mut texts = vec![item_line(&whole)];
            for n in GOAL_SHORT {
                if g.chars().count() > n {
                    texts.push(item_line(&truncate(g, n)));
                }
            }
            out.push(
                Cand::new(Sec::Goal, (i as u64, 0), texts, CandKind::Goal, true).src(Src::Goal(i)),
            );
        }
        for (sec, list) in [
            (Sec::Constraints, &self.constraints),
            (Sec::Decisions, &self.decisions),
        ] {
            for (i, s) in list.iter().enumerate().rev() {
                let src = if sec == Sec::Constraints {
                    Src::Constraint(i)
                } else {
                    Src::Decision(i)
                };
                let mut c = Cand::new(
                    sec,
                    (i as u64, 0),
                    short_variants(s),
                    CandKind::Contained,
                    true,
                )
                .src(src);
                c.plain = one_line(s);
                out.push(c);
            }
        }
        let newest_first = |a: &usize, b: &usize| {
            self.literals[*b]
                .last_seen
                .cmp(&self.literals[*a].last_seen)
        };
        let mut user: Vec<usize> = Vec::new();
        let mut prose: Vec<usize> = Vec::new();
        let mut tool: Vec<usize> = Vec::new();
        for (i, l) in self.literals.iter().enumerate() {
            match l.origin {
                Origin::User => user.push(i),
                Origin::Prose => prose.push(i),
                Origin::Tool => tool.push(i),
            }
        }
        user.sort_by(newest_first);
        prose.sort_by(newest_first);
        let flat_lit = |i: usize| {
            let l = &self.literals[i];
            let sec = match l.origin {
                Origin::User => Sec::UserLiterals,
                Origin::Prose => Sec::Literals,
                Origin::Tool => Sec::ToolLiterals,
            };
            Cand::new(
                sec,
                (l.last_seen, 0),
                vec![item_line(&l.text)],
                CandKind::Literal(i),
                false,
            )
            .src(Src::Literal(i))
        };
        for &i in &user {
            out.push(flat_lit(i));
        }
        // Tier B: todos and the most recent operations.
        for (i, t) in self.todos.iter().enumerate().rev() {
            out.push(
                Cand::new(
                    Sec::Todo,
                    (i as u64, 0),
                    vec![item_line(t)],
                    CandKind::Other,
                    true,
                )
                .src(Src::Todo(i)),
            );
        }
        let rows = self.op_rows();
        let mut by_recency: Vec<usize> = (0..rows.len()).collect();
        by_recency.sort_by(|&a, &b| rows[b].op.last_seen.cmp(&rows[a].op.last_seen));
        let shown = match detail {
            Detail::Folded => FOLDED_OPS,
            _ => usize::MAX,
        };
        // Where each row's candidate will be, and which row each operation shape lands on.
        let mut row_at: HashMap<usize, usize> = HashMap::new();
        let mut row_of_shape: HashMap<String, usize> = HashMap::new();
        for &r in &by_recency {
            row_of_shape.entry(rows[r].shape.clone()).or_insert(r);
        }
        let row_cand = |r: &OpRow, listed: bool| {
            let texts = if listed {
                vec![r.op.render_line()]
            } else {
                // Folded detail: counted, not listed, whatever the budget.
                Vec::new()
            };
            Cand::new(
                Sec::Operations,
                (r.key, 0),
                texts,
                CandKind::Op(r.op.tool().to_string(), r.op.count),
                r.op.variants == 1,
            )
            .src(Src::Ops(r.members.clone()))
        };
        let mut later_rows: Vec<(usize, Cand)> = Vec::new();
        for (rank, &r) in by_recency.iter().enumerate() {
            if rank < shown.min(RECENT_OPS) {
                row_at.insert(r, out.len());
                out.push(row_cand(&rows[r], true));
            } else {
                later_rows.push((r, row_cand(&rows[r], rank < shown)));
            }
        }
        // Tier C: model-written notes, newest first.
        for (ni, note) in self.notes.iter().enumerate() {
            for (li, line) in note.lines.iter().enumerate().rev() {
                let texts = match detail {
                    Detail::Folded => vec![item_line(&truncate(line, ITEM_SHORT))],
                    _ => short_variants(line),
                };
                out.push(
                    Cand::new(Sec::Note(ni), (li as u64, 0), texts, CandKind::Other, true)
                        .src(Src::Note(ni, li)),
                );
            }
        }
        // Tier D: what the agent stated, newest first.
        for &i in &prose {
            out.push(flat_lit(i));
        }
        // Tier E: what tools printed, shared fairly between operations: the newest literal of
        // every operation, then the second newest of every operation, and so on, so a noisy
        // operation repeated thousands of times cannot crowd out a command that ran once. A
        // literal is shown under its operation's row, which it brings in if needed; the rows
        // not chosen so far come after these literals.
        let mut groups: Vec<(u64, Vec<usize>)> = Vec::new();
        let mut group_at: HashMap<Option<&str>, usize> = HashMap::new();
        for &i in &tool {
            let key = self.literals[i].group.as_deref();
            let g = *group_at.entry(key).or_insert_with(|| {
                groups.push((0, Vec::new()));
                groups.len() - 1
            });
            groups[g].0 = groups[g].0.max(self.literals[i].last_seen);
            groups[g].1.push(i);
        }
        for g in &mut groups {
            g.1.sort_by(newest_first);
        }
        groups.sort_by_key(|g| std::cmp::Reverse(g.0));
        let tool_count = tool.len();
        let late_base = out.len() + tool_count;
        for (j, (r, _)) in later_rows.iter().enumerate() {
            row_at.insert(*r, late_base + j);
        }
        let listed = |c: usize, out: &[Cand]| match c.checked_sub(late_base) {
            Some(j) => !later_rows[j].1.texts.is_empty(),
            None => !out[c].texts.is_empty(),
        };
        let deepest = groups.iter().map(|g| g.1.len()).max().unwrap_or(0);
        for depth in 0..deepest {
            for g in &groups {
                let Some(&i) = g.1.get(depth) else {
                    continue;
                };
                let l = &self.literals[i];
                let row = l
                    .group
                    .as_ref()
                    .and_then(|s| row_of_shape.get(s))
                    .and_then(|r| row_at.get(r).map(|&c| (*r, c)))
                    .filter(|&(_, c)| listed(c, &out));
                let cand = match row {
                    Some((r, c)) => {
                        let mut cand = Cand::new(
                            Sec::Operations,
                            (rows[r].key, 2 + l.last_seen),
                            vec![format!("  - {}\n", one_line(&l.text))],
                            CandKind::Literal(i),
                            false,
                        )
                        .src(Src::Literal(i));
                        cand.parent = Some(c);
                        cand.needs_parent = true;
                        cand
                    }
                    None => flat_lit(i),
                };
                out.push(cand);
            }
        }
        out.extend(later_rows.into_iter().map(|(_, c)| c));
        // Tier F: the result lines of the last operations.
        if detail == Detail::Standard {
            for &r in by_recency
                .iter()
                .filter(|&&r| rows[r].op.variants == 1 && !rows[r].op.first_lines.is_empty())
                .take(DETAILED_OPS)
            {
                let Some(&parent) = row_at.get(&r) else {
                    continue;
                };
                let lines: String = rows[r]
                    .op
                    .first_lines
                    .iter()
                    .map(|l| format!("  | {}\n", one_line(l)))
                    .collect();
                let mut cand = Cand::new(
                    Sec::Operations,
                    (rows[r].key, 1),
                    vec![lines],
                    CandKind::Other,
                    false,
                );
                cand.parent = Some(parent);
                cand.needs_parent = true;
                out.push(cand);
            }
        }
        out
    }

    /// The operations as rendered rows: an exact command per row, or one row with `*` for a
    /// group of more than [`MAX_VARIANT_LINES`] near-identical commands.
    fn op_rows(&self) -> Vec<OpRow> {
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        let mut at: HashMap<String, usize> = HashMap::new();
        for (i, op) in self.operations.iter().enumerate() {
            let shape = shape_of(&op.line);
            match at.get(&shape) {
                Some(&g) => groups[g].1.push(i),
                None => {
                    at.insert(shape.clone(), groups.len());
                    groups.push((shape, vec![i]));
                }
            }
        }
        let mut rows = Vec::new();
        for (shape, members) in groups {
            let variants: u64 = members.iter().map(|&i| self.operations[i].variants).sum();
            if variants <= MAX_VARIANT_LINES {
                for i in members {
                    rows.push(OpRow {
                        key: i as u64,
                        shape: shape.clone(),
                        op: self.operations[i].clone(),
                        members: vec![i],
                    });
                }
                continue;
            }
            let mut op = Operation {
                line: shape.clone(),
                count: 0,
                variants,
                exits: BTreeMap::new(),
                first_lines: Vec::new(),
                last_seen: 0,
            };
            for &i in &members {
                let m = &self.operations[i];
                op.count += m.count;
                op.last_seen = op.last_seen.max(m.last_seen);
                for (code, n) in &m.exits {
                    *op.exits.entry(code.clone()).or_default() += n;
                }
            }
            rows.push(OpRow {
                key: members.first().copied().unwrap_or(0) as u64,
                shape,
                op,
                members,
            });
        }
        rows.sort_by_key(|r| r.key);
        rows
    }
}

struct OpRow {
    key: u64,
    shape: String,
    op: Operation,
    /// The operations it stands for.
    members: Vec<usize>,
}

/// Sections in the order they are rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Sec {
    Goal,
    Todo,
    Decisions,
    Constraints,
    Note(usize),
    Operations,
    UserLiterals,
    Literals,
    ToolLiterals,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum CandKind {
    Goal,
    /// A decision or constraint: skipped when the chosen goal text already contains it.
    Contained,
    Literal(usize),
    /// An operation row: tool and runs, folded into counts when it is not chosen.
    Op(String, u64),
    Other,
}

/// The digest item a candidate renders, so what a layout leaves out can be handed on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Src {
    None,
    Goal(usize),
    Todo(usize),
    Decision(usize),
    Constraint(usize),
    Note(usize, usize),
    Literal(usize),
    Ops(Vec<usize>),
}

/// One renderable item: where it goes, and its renderings, longest first.
struct Cand {
    sec: Sec,
    /// Order within the section.
    key: (u64, u64),
    texts: Vec<String>,
    kind: CandKind,
    /// Whether its literals count as present once it is chosen.
    scan: bool,
    /// For `Contained`: the text to look for in the goal.
    plain: String,
    /// The candidate this one is rendered under (an operation row).
    parent: Option<usize>,
    /// Whether it can only appear with its parent (which it then brings in).
    needs_parent: bool,
    /// The digest item it renders.
    src: Src,
}

impl Cand {
    fn new(sec: Sec, key: (u64, u64), texts: Vec<String>, kind: CandKind, scan: bool) -> Self {
        Cand {
            sec,
            key,
            texts,
            kind,
            scan,
            plain: String::new(),
            parent: None,
            needs_parent: false,
            src: Src::None,
        }
    }

    fn src(mut self, src: Src) -> Self {
        self.src = src;
        self
    }
}

fn short_variants(s: &str) -> Vec<String> {
    let mut v = vec![item_line(s)];
    if s.chars().count() > ITEM_SHORT {
        v.push(item_line(&truncate(s, ITEM_SHORT)));
    }
    v
}

fn folded_ops_line(counts: &BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = counts.iter().map(|(t, n)| format!("{t}×{n}")).collect();
    format!("- folded operations: {}\n", parts.join(", "))
}

fn folded_lits_line(counts: &BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = counts.iter().map(|(t, n)| format!("{t}×{n}")).collect();
    format!("- folded literals: {}\n", parts.join(", "))
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

/// The shape of an operation line: digit runs and long hex runs become `*`, so commands that
/// differ only in numbers, ids or hashes group together.
fn shape_of(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.is_empty() {
            return;
        }
        let hexy = run.len() >= 7
            && run.bytes().all(|b| b.is_ascii_hexdigit())
            && run.bytes().any(|b| b.is_ascii_digit());
        if hexy {
            out.push('*');
        } else {
            let mut in_digits = false;
            for c in run.chars() {
                if c.is_ascii_digit() {
                    if !in_digits {
                        out.push('*');
                    }
                    in_digits = true;
                } else {
                    out.push(c);
                    in_digits = false;
                }
            }
        }
        run.clear();
    };
    for c in line.chars() {
        if c.is_ascii_alphanumeric() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// Builds a digest from sources.
struct Builder {
    d: Digest,
    starts_conversation: bool,
    goal_taken: bool,
    clock: u64,
    seen_goal: HashSet<String>,
    seen_decisions: HashSet<String>,
    seen_constraints: HashSet<String>,
    todo_at: HashMap<String, usize>,
    op_at: HashMap<String, usize>,
    calls: HashMap<String, usize>,
    lit_at: HashMap<String, usize>,
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
            seen_goal: HashSet::new(),
            seen_decisions: HashSet::new(),
            seen_constraints: HashSet::new(),
            todo_at: HashMap::new(),
            op_at: HashMap::new(),
            calls: HashMap::new(),
            lit_at: HashMap::new(),
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
        let mut found = Vec::new();
        scan_literals(head, false, &mut |t, k| found.push((t.to_string(), k)));
        for (t, k) in found {
            self.literal(t, k, Origin::Tool, group.clone());
        }
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
        let mut found = Vec::new();
        scan_literals(&line, false, &mut |t, k| found.push((t.to_string(), k)));
        for (t, k) in found {
            self.literal(t, k, Origin::Tool, group.clone());
        }
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
                if self.seen_constraints.insert(c.clone()) {
                    self.d.constraints.push(c);
                }
            } else if cues.decision {
                let c = truncate(sentence, SENTENCE_CHARS);
                if self.seen_decisions.insert(c.clone()) {
                    self.d.decisions.push(c);
                }
            }
        }
        let origin = if user { Origin::User } else { Origin::Prose };
        let mut found = Vec::new();
        scan_literals(text, true, &mut |t, k| found.push((t.to_string(), k)));
        for (t, k) in found {
            self.literal(t, k, origin, None);
        }
    }

    fn literal(&mut self, text: String, kind: LiteralKind, origin: Origin, group: Option<String>) {
        match self.lit_at.get(&text) {
            Some(&i) => {
                let l = &mut self.d.literals[i];
                l.last_seen = self.clock;
                if origin < l.origin {
                    l.origin = origin;
                    l.group = None;
                } else if origin == Origin::Tool && l.origin == Origin::Tool {
                    // Rendered under the operation that printed it last.
                    l.group = group;
                }
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

/// Parses rendered or model-written summaries.
#[derive(Default)]
struct Parser {
    d: Digest,
    clock: u64,
    seen: HashMap<&'static str, HashSet<String>>,
    todo_at: HashMap<String, usize>,
    lit_at: HashMap<String, usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PSec {
    Goal,
    Todo,
    Decisions,
    Constraints,
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
            if current == PSec::Ops
                && let Some(lit) = line.strip_prefix("  - ")
            {
                // A literal a tool printed, under its operation.
                let group = self.d.operations.last().map(|o| shape_of(&o.line));
                let kind = classify_whole(lit.trim()).unwrap_or(LiteralKind::Quoted);
                self.add_literal(lit.trim().to_string(), kind, Origin::Tool, group);
                continue;
            }
            if let Some(detail) = line.strip_prefix("  | ") {
                if current == PSec::Ops
                    && let Some(op) = self.d.operations.last_mut()
                {
                    op.first_lines.push(detail.to_string());
                }
                self.scan(detail, Origin::Tool);
                continue;
            }
            let item = strip_bullet(line.trim());
            if item.is_empty() {
                continue;
            }
            match current {
                PSec::Goal => self.item("goal", item, Origin::User),
                PSec::Decisions => self.item("decisions", item, Origin::Prose),
                PSec::Constraints => self.item("constraints", item, Origin::User),
                PSec::Todo => {
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
        self.d
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

fn merge_unique(list: &mut Vec<String>, later: Vec<String>) {
    let mut seen: HashSet<String> = list.iter().cloned().collect();
    for x in later {
        if seen.insert(x.clone()) {
            list.push(x);
        }
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

/// One item per line: a newline inside would break parsing back.
fn one_line(s: &str) -> String {
    if s.contains(['\n', '\r']) {
        s.split(['\n', '\r'])
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        s.to_string()
    }
}

fn item_line(s: &str) -> String {
    format!("- {}\n", one_line(s))
}

fn truncate(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn prefix_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Splits text into sentences: at newlines, at `.`, `!` and `?` followed by a space, and at
/// Chinese `。！？；`. Terminators stay with their sentence.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let cut = match b {
            b'\n' => Some((i, i + 1)),
            b'.' | b'!' | b'?' => {
                let next = bytes.get(i + 1).copied();
                if next.is_none_or(|n| n == b' ' || n == b'\n' || n == b'\t' || n == b'\r') {
                    Some((i + 1, i + 1))
                } else {
                    None
                }
            }
            // 。 is E3 80 82; ！ EF BC 81; ？ EF BC 9F; ； EF BC 9B.
            0xE3 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0x82) => {
                Some((i + 3, i + 3))
            }
            0xEF if bytes.get(i + 1) == Some(&0xBC)
                && matches!(bytes.get(i + 2), Some(0x81 | 0x9F | 0x9B)) =>
            {
                Some((i + 3, i + 3))
            }
            _ => None,
        };
        match cut {
            Some((end, next)) => {
                let s = text[start..end].trim();
                if !s.is_empty() {
                    out.push(s);
                }
                start = next;
                i = next;
            }
            None => i += 1,
        }
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
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

/// A user message that announces itself as a goal.
fn says_goal(text: &str) -> bool {
    let head: String = text.trim_start().chars().take(24).collect();
    let lower = head.to_lowercase();
    [
        "goal:",
        "goal -",
        "new goal",
        "objective:",
        "task:",
        "the goal",
        "our goal",
    ]
    .iter()
    .any(|m| lower.starts_with(m))
        || ["目标：", "目标:", "任务：", "任务:", "新目标"]
            .iter()
            .any(|m| head.starts_with(m))
}

const EN_DECISION_WORDS: &[&str] = &[
    "decide",
    "decided",
    "decides",
    "deciding",
    "decision",
    "decisions",
    "choose",
    "chose",
    "chosen",
    "choosing",
    "agreed",
    "adopt",
    "adopted",
    "adopting",
    "opted",
    "confirmed",
    "confirm",
    "confirms",
    "approved",
    "approve",
    "prefer",
    "preferred",
    "picked",
    "settled",
    "switched",
    "switching",
    "finalized",
    "finalised",
    "verdict",
    "conclusion",
    "we'll",
    "instead",
];
const EN_DECISION_PAIRS: &[(&str, &str)] = &[
    ("go", "with"),
    ("going", "with"),
    ("went", "with"),
    ("stick", "with"),
    ("sticking", "with"),
    ("settle", "on"),
    ("rather", "than"),
    ("switch", "to"),
    ("opt", "for"),
    ("we", "will"),
    ("we", "shall"),
    ("let's", "use"),
    ("let's", "go"),
    ("let's", "keep"),
    ("let's", "switch"),
    ("let's", "stick"),
    ("let's", "drop"),
    ("let's", "exclude"),
    ("let's", "treat"),
    ("let's", "do"),
    ("from", "now"),
    ("plan", "is"),
    ("final", "call"),
    ("final", "answer"),
    ("ok", "we"),
    ("okay", "we"),
    ("sounds", "good"),
    ("pick", "the"),
];
const ZH_DECISION: &[&str] = &[
    "确认",
    "决定",
    "决策",
    "选择",
    "选用",
    "选定",
    "采用",
    "采纳",
    "改用",
    "改为",
    "改成",
    "换成",
    "换用",
    "就用",
    "定了",
    "定下来",
    "确定",
    "同意",
    "拍板",
    "最终",
    "就按",
    "那就",
    "统一用",
    "为准",
    "还是用",
    "而非",
    "而不是",
    "不再用",
    "敲定",
    "就这么办",
    "商量好",
    "说好",
    "约定",
    "定好",
    "口径",
    "算作",
    "视为",
];
const EN_CONSTRAINT_WORDS: &[&str] = &[
    "must",
    "mustn't",
    "only",
    "never",
    "don't",
    "dont",
    "doesn't",
    "cannot",
    "can't",
    "shouldn't",
    "won't",
    "avoid",
    "ensure",
    "always",
    "required",
    "requires",
    "require",
    "requirement",
    "mandatory",
    "forbidden",
    "prohibited",
    "without",
    "exclude",
    "excluding",
    "limit",
    "deadline",
    "constraint",
    "constraints",
    "strictly",
    "keep",
    "skip",
    "ignore",
    "refrain",
];
const EN_CONSTRAINT_PAIRS: &[(&str, &str)] = &[
    ("do", "not"),
    ("does", "not"),
    ("should", "not"),
    ("must", "not"),
    ("may", "not"),
    ("can", "not"),
    ("make", "sure"),
    ("at", "most"),
    ("at", "least"),
    ("no", "more"),
    ("no", "later"),
    ("not", "allowed"),
    ("not", "exceed"),
    ("stay", "within"),
    ("stay", "under"),
    ("stay", "below"),
    ("hands", "off"),
    ("off", "limits"),
    ("by", "eod"),
    ("by", "end"),
    ("not", "to"),
    ("has", "to"),
    ("have", "to"),
    ("needs", "to"),
    ("got", "to"),
    ("stay", "away"),
    ("stick", "to"),
];
const WEEKDAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "tomorrow",
    "tonight",
];
const NO_STOPWORDS: &[&str] = &[
    "worries", "problem", "problems", "idea", "luck", "thanks", "clue", "way", "doubt", "wonder",
    "matter", "longer", "one",
];
const ZH_CONSTRAINT: &[&str] = &[
    "约束",
    "限制",
    "必须",
    "务必",
    "一定要",
    "只",
    "仅",
    "不要",
    "不需要",
    "不用",
    "别",
    "禁止",
    "不得",
    "不能",
    "不可",
    "不允许",
    "切勿",
    "请勿",
    "避免",
    "至少",
    "最多",
    "不超过",
    "以内",
    "之前",
    "截止",
    "确保",
    "保证",
    "千万",
    "不准",
    "严禁",
    "不许",
];

/// What a sentence signals: a goal, a decision or a constraint.
#[derive(Debug, Default, Clone, Copy)]
struct Cues {
    goal: bool,
    decision: bool,
    constraint: bool,
}

impl Cues {
    fn of(sentence: &str) -> Cues {
        let mut cues = Cues::default();
        let question = sentence.ends_with('?') || sentence.ends_with('？');
        if !sentence.is_ascii() {
            cues.goal = sentence.contains("目标：") || sentence.contains("目标:");
            cues.decision = !question && ZH_DECISION.iter().any(|m| sentence.contains(m));
            cues.constraint = ZH_CONSTRAINT.iter().any(|m| sentence.contains(m));
        }
        let lower = sentence.to_lowercase().replace('’', "'");
        cues.goal |= lower.contains("goal:");
        // Words with their separators, so "no, thanks" is not "no thanks".
        let mut words: Vec<(&str, bool)> = Vec::new();
        let mut start = None;
        let mut last_end = 0;
        for (i, c) in lower.char_indices() {
            let word_char = c.is_alphanumeric() || c == '\'';
            match (word_char, start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    let spaced = lower[last_end..s].trim().is_empty();
                    words.push((lower[s..i].trim_matches('\''), spaced));
                    last_end = i;
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            let spaced = lower[last_end..s].trim().is_empty();
            words.push((lower[s..].trim_matches('\''), spaced));
        }
        for (i, &(w, _)) in words.iter().enumerate() {
            let next = words
                .get(i + 1)
                .filter(|(_, spaced)| *spaced)
                .map(|(n, _)| *n);
            if !question && !cues.decision {
                cues.decision = EN_DECISION_WORDS.contains(&w)
                    || next.is_some_and(|n| EN_DECISION_PAIRS.contains(&(w, n)));
            }
            if !cues.constraint {
                cues.constraint = EN_CONSTRAINT_WORDS.contains(&w)
                    || next.is_some_and(|n| {
                        EN_CONSTRAINT_PAIRS.contains(&(w, n))
                            || (matches!(w, "before" | "by" | "until") && WEEKDAYS.contains(&n))
                            || (w == "no"
                                && n.chars().next().is_some_and(char::is_alphabetic)
                                && !NO_STOPWORDS.contains(&n))
                    });
            }
            if cues.constraint && (cues.decision || question) {
                break;
            }
        }
        // "Leave X out (of it)": an instruction to exclude, however long X is.
        if !cues.constraint
            && let Some(at) = words.iter().position(|&(w, _)| w == "leave")
        {
            cues.constraint = words[at + 1..].iter().any(|&(w, _)| w == "out");
        }
        cues
    }
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
                    format!("{k}={}", truncate(&one_line(s), LINE_CHARS))
                }
                Some((k, v)) => format!("{k}={}", truncate(&v.to_string(), LINE_CHARS)),
                None => String::new(),
            }
        }
        _ => truncate(&one_line(arguments), LINE_CHARS),
    }
}

// ---------------------------------------------------------------------------------------------
// Literal recognition. Hand-written and linear: a word scanner (words end at whitespace, CJK
// characters and brackets), a classifier per word, a few multi-word forms (a number and its
// unit, a date with its time and zone, month names), and, in prose, quoted and backticked spans.
// ---------------------------------------------------------------------------------------------

const UNITS: &[&str] = &[
    "%", "eur", "usd", "cny", "rmb", "gbp", "jpy", "chf", "ms", "µs", "us", "ns", "s", "sec",
    "secs", "second", "seconds", "min", "mins", "minute", "minutes", "h", "hr", "hrs", "hour",
    "hours", "d", "day", "days", "week", "weeks", "month", "months", "year", "years", "b", "bytes",
    "kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib", "k", "m", "bn", "rows", "lines",
    "tokens", "files", "records", "items", "users", "requests", "req/s", "rps", "qps", "cores",
    "vcpu", "vcpus", "nodes", "pods", "replicas", "ops/s", "px", "km", "kg", "mbps", "gbps", "hz",
    "mhz", "ghz", "°c", "pct", "percent", "元", "万", "亿",
];
const MAGNITUDE_SUFFIX: &[&str] = &["k", "m", "b", "bn", "kb", "mb", "gb", "tb"];
const MONTHS: &[&str] = &[
    "jan",
    "january",
    "feb",
    "february",
    "mar",
    "march",
    "apr",
    "april",
    "may",
    "jun",
    "june",
    "jul",
    "july",
    "aug",
    "august",
    "sep",
    "sept",
    "september",
    "oct",
    "october",
    "nov",
    "november",
    "dec",
    "december",
];
const FILE_EXTS: &[&str] = &[
    "csv", "tsv", "json", "jsonl", "yaml", "yml", "toml", "xml", "txt", "md", "log", "sql", "py",
    "rs", "js", "ts", "go", "java", "sh", "ps1", "bat", "xlsx", "xls", "docx", "pdf", "parquet",
    "avro", "orc", "gz", "zip", "tar", "tgz", "png", "jpg", "ipynb", "html", "css", "ini", "cfg",
    "conf", "env", "lock", "db", "sqlite", "bak", "pem", "key", "crt",
];

/// A literal the recogniser found: a slice of the text and its kind.
fn scan_literals(text: &str, prose: bool, out: &mut dyn FnMut(&str, LiteralKind)) {
    let spans = if prose {
        quoted_spans(text)
    } else {
        Vec::new()
    };
    for &(s, e) in &spans {
        out(&text[s..e], LiteralKind::Quoted);
    }
    if !text.is_ascii() {
        for (s, e) in chinese_dates(text) {
            out(&text[s..e], LiteralKind::Time);
        }
    }
    let words = words(text);
    let inside = |pos: usize| spans.iter().any(|&(s, e)| pos >= s && pos < e);
    let mut i = 0;
    while i < words.len() {
        let (ws, we) = words[i];
        if !spans.is_empty() && inside(ws) {
            i += 1;
            continue;
        }
        let w = &text[ws..we];
        let adjacent = |j: usize| -> Option<&str> {
            let (ps, pe) = (words[j - 1].1, words.get(j)?.0);
            (pe == ps + 1 && text.as_bytes()[ps] == b' ').then(|| &text[words[j].0..words[j].1])
        };
        // A month name with a day (and year): "Nov 3, 2026", "3 November 2026".
        if let Some(end) = month_date(text, &words, i) {
            out(&text[ws..end.1], LiteralKind::Time);
            i = end.0 + 1;
            continue;
        }
        let Some((kind, sub)) = classify(w) else {
            // A plain integer with a unit after it: "300 rows".
            if is_plain_int(w)
                && let Some(unit) = adjacent(i + 1)
                && is_unit(unit)
            {
                out(&text[ws..words[i + 1].1], LiteralKind::Number);
                i += 2;
                continue;
            }
            i += 1;
            continue;
        };
        let (ss, se) = (ws + sub.0, ws + sub.1);
        if !prose && kind == LiteralKind::Number && is_plain_int(&text[ss..se]) {
            // Counts printed by tools are not worth keeping verbatim; ids in prose are.
            i += 1;
            continue;
        }
        let mut end = se;
        let mut last = i;
        match kind {
            LiteralKind::Time => {
                // A date, then its time, then its zone.
                if is_date(&text[ss..se])
                    && let Some(t) = adjacent(last + 1)
                    && is_time(t)
                {
                    last += 1;
                    end = words[last].1;
                }
                if let Some(z) = adjacent(last + 1)
                    && is_zone(z)
                    && !ends_with_zone(&text[ss..end])
                {
                    last += 1;
                    end = words[last].1;
                }
            }
            LiteralKind::Number if se == we && !text[ss..se].ends_with('%') => {
                if let Some(unit) = adjacent(i + 1)
                    && is_unit(unit)
                {
                    last = i + 1;
                    end = words[last].1;
                }
            }
            _ => {}
        }
        out(&text[ss..end], kind);
        i = last + 1;
    }
}

fn is_word_break(c: char) -> bool {
    c.is_whitespace()
        || is_cjk(c)
        || matches!(
            c,
            '(' | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '<'
                | '>'
                | '"'
                | '\''
                | '`'
                | '|'
                | ';'
                | '“'
                | '”'
                | '‘'
                | '’'
                | '«'
                | '»'
                | '，'
                | '。'
                | '、'
        )
}

/// CJK ideographs, kana, hangul, CJK punctuation and fullwidth forms.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x303F | 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF |
        0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x20000..=0x2FFFF)
}

/// Word spans, trimmed of trailing sentence punctuation. A comma breaks words except between
/// digits ("1,234").
fn words(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut start: Option<usize> = None;
    let push = |s: usize, e: usize, out: &mut Vec<(usize, usize)>| {
        let w = &text[s..e];
        let trimmed_end = w.trim_end_matches(['.', ',', ':', '!', '?', '*', '…', '：']);
        let trimmed = trimmed_end.trim_start_matches('*');
        if !trimmed.is_empty() {
            let ns = s + (trimmed_end.len() - trimmed.len());
            out.push((ns, ns + trimmed.len()));
        }
    };
    for (i, c) in text.char_indices() {
        let brk = if c == ',' {
            let prev_digit = i > 0 && bytes[i - 1].is_ascii_digit();
            let next_digit = bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
            !(prev_digit && next_digit)
        } else {
            is_word_break(c)
        };
        match (brk, start) {
            (true, Some(s)) => {
                push(s, i, &mut out);
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        push(s, text.len(), &mut out);
    }
    out
}

/// Quoted and backticked spans, delimiters included: "…", '…', “…”, ‘…’, 「…」, 『…』, «…»
/// and `…`, on one line and not too long to be a token.
fn quoted_spans(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (i, c) = chars[k];
        let close = match c {
            '"' => Some('"'),
            '“' => Some('”'),
            '‘' => Some('’'),
            '「' => Some('」'),
            '『' => Some('』'),
            '«' => Some('»'),
            '\'' => Some('\''),
            '`' => Some('`'),
            _ => None,
        };
        let Some(close) = close else {
            k += 1;
            continue;
        };
        let prev = k.checked_sub(1).map(|p| chars[p].1);
        let next = chars.get(k + 1).map(|x| x.1);
        let opener_ok = match c {
            '`' => {
                next != Some('`') && prev != Some('`') && next.is_some_and(|n| !n.is_whitespace())
            }
            '\'' | '"' => {
                prev.is_none_or(|p| {
                    p.is_whitespace() || is_cjk(p) || matches!(p, '(' | '[' | '{' | ':' | '=' | ',')
                }) && next.is_some_and(|n| !n.is_whitespace() && n != c)
            }
            _ => true,
        };
        if !opener_ok {
            k += 1;
            continue;
        }
        let max = match c {
            '\'' => 80,
            '`' => 160,
            _ => 120,
        };
        let mut found = None;
        for (j, &(pos, ch)) in chars.iter().enumerate().skip(k + 1).take(max + 1) {
            if ch == '\n' {
                break;
            }
            if ch == close {
                let after = chars.get(j + 1).map(|x| x.1);
                let closer_ok = match c {
                    '\'' => chars[j - 1].1 != ' ' && after.is_none_or(|a| !a.is_alphanumeric()),
                    '`' => after != Some('`'),
                    _ => true,
                };
                if closer_ok {
                    found = Some((j, pos + ch.len_utf8()));
                }
                break;
            }
        }
        match found {
            Some((j, end)) if j > k + 1 => {
                out.push((i, end));
                k = j + 1;
            }
            _ => k += 1,
        }
    }
    out
}

/// "2026年11月3日", "11月3日", optionally followed by a time.
fn chinese_dates(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut last_end = 0;
    for (m, _) in text.match_indices('月') {
        if m < last_end {
            continue;
        }
        let mut s = m;
        let month_digits = bytes[..m]
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if month_digits == 0 || month_digits > 2 {
            continue;
        }
        s -= month_digits;
        if text[..s].ends_with('年') {
            let y = s - '年'.len_utf8();
            let yd = bytes[..y]
                .iter()
                .rev()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if yd == 4 {
                s = y - 4;
            }
        }
        let mut e = m + '月'.len_utf8();
        let dd = bytes[e..].iter().take_while(|b| b.is_ascii_digit()).count();
        if (1..=2).contains(&dd) {
            let after = &text[e + dd..];
            if after.starts_with('日') || after.starts_with('号') {
                e += dd + '日'.len_utf8();
            }
        }
        if e == m + '月'.len_utf8() && s + month_digits == m {
            // "3月" alone is not specific enough.
            continue;
        }
        let rest = text[e..].trim_start_matches(' ');
        let t = rest
            .char_indices()
            .find(|&(_, c)| !(c.is_ascii_digit() || c == ':'))
            .map_or(rest.len(), |(k, _)| k);
        if t > 0 && is_time(&rest[..t]) {
            e = text.len() - rest.len() + t;
        }
        out.push((s, e));
        last_end = e;
    }
    out
}

/// "Nov 3", "Nov 3, 2026", "3 Nov 2026", "November 3rd": returns (last word index, end byte).
fn month_date(text: &str, words: &[(usize, usize)], i: usize) -> Option<(usize, usize)> {
    let w = |j: usize| words.get(j).map(|&(s, e)| &text[s..e]);
    let gap = |j: usize| -> Option<&str> {
        let (a, b) = (words.get(j - 1)?.1, words.get(j)?.0);
        Some(&text[a..b])
    };
    let is_month = |s: &str| {
        let t = s.trim_end_matches('.');
        t.len() >= 3
            && t.starts_with(|c: char| c.is_ascii_uppercase())
            && MONTHS.iter().any(|m| m.eq_ignore_ascii_case(t))
    };
    let is_day = |s: &str| {
        let d = s.trim_end_matches(['s', 't', 'n', 'd', 'r', 'h']);
        !d.is_empty()
            && d.len() <= 2
            && d.bytes().all(|b| b.is_ascii_digit())
            && d.parse::<u32>().is_ok_and(|n| (1..=31).contains(&n))
    };
    let is_year = |s: &str| {
        s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit()) && s.starts_with(['1', '2'])
    };
    let first = w(i)?;
    if is_month(first) {
        let day = w(i + 1)?;
        if gap(i + 1)? != " " || !is_day(day) {
            return None;
        }
        let mut last = i + 1;
        if let (Some(y), Some(g)) = (w(i + 2), gap(i + 2))
            && (g == ", " || g == " ")
            && is_year(y)
        {
            last = i + 2;
        }
        return Some((last, words[last].1));
    }
    if is_day(first) && first.bytes().all(|b| b.is_ascii_digit()) {
        let month = w(i + 1)?;
        if gap(i + 1)? != " " || !is_month(month) {
            return None;
        }
        let mut last = i + 1;
        if let (Some(y), Some(g)) = (w(i + 2), gap(i + 2))
            && g == " "
            && is_year(y)
        {
            last = i + 2;
        }
        return Some((last, words[last].1));
    }
    None
}

/// The kind of a whole string, for literals listed verbatim.
fn classify_whole(s: &str) -> Option<LiteralKind> {
    let first = s.chars().next()?;
    if matches!(first, '"' | '\'' | '`' | '“' | '‘' | '「' | '『' | '«') {
        return Some(LiteralKind::Quoted);
    }
    if let Some((head, tail)) = s.split_once(' ') {
        if is_plain_int(head) && is_unit(tail) {
            return Some(LiteralKind::Number);
        }
        return classify(head).map(|(k, _)| k);
    }
    match classify(s) {
        Some((k, (0, e))) if e == s.len() => Some(k),
        _ => None,
    }
}

/// Classifies one word; returns its kind and the sub-span that is the literal.
fn classify(w: &str) -> Option<(LiteralKind, (usize, usize))> {
    let whole = (0, w.len());
    if w.len() < 2 || w.len() > 300 || w.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    if w.contains("://") {
        let (scheme, rest) = w.split_once("://")?;
        let scheme_ok = !scheme.is_empty()
            && scheme.len() <= 20
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-' | b':'));
        return (scheme_ok && rest.len() >= 2).then_some((LiteralKind::Url, whole));
    }
    if let Some((k, v)) = w.split_once('=') {
        // key=value: the value is the literal.
        if !k.is_empty() && !v.is_empty() && !v.contains('=') {
            let off = k.len() + 1;
            return classify(v).map(|(kind, (s, e))| (kind, (s + off, e + off)));
        }
        return None;
    }
    if w.contains('@') {
        return is_email(w).then_some((LiteralKind::Email, whole));
    }
    if let Some(rest) = w.strip_prefix('#') {
        return (rest.len() >= 2 && rest.bytes().all(|b| b.is_ascii_digit()))
            .then_some((LiteralKind::Ticket, whole));
    }
    if is_windows_path(w) {
        return Some((LiteralKind::Path, whole));
    }
    if is_date(w) || is_datetime(w) || is_time(w) {
        return Some((LiteralKind::Time, whole));
    }
    if is_ipv4_like(w) || is_ipv6(w) {
        return Some((LiteralKind::Address, whole));
    }
    if w.contains('/') {
        return is_path(w).then_some((LiteralKind::Path, whole));
    }
    if is_host_port(w) {
        return Some((LiteralKind::Address, whole));
    }
    if let Some((algo, hex)) = w.split_once(':') {
        let ok = !algo.is_empty()
            && algo.len() <= 10
            && algo.bytes().all(|b| b.is_ascii_alphanumeric())
            && hex.len() >= 16
            && hex.bytes().all(|b| b.is_ascii_hexdigit());
        return ok.then_some((LiteralKind::Hash, whole));
    }
    if is_version(w) {
        return Some((LiteralKind::Version, whole));
    }
    if let Some(lit) = number_literal(w) {
        return lit.then_some((LiteralKind::Number, whole));
    }
    if is_uuid(w) {
        return Some((LiteralKind::Id, whole));
    }
    if is_hash(w) {
        return Some((LiteralKind::Hash, whole));
    }
    if is_ticket(w) {
        return Some((LiteralKind::Ticket, whole));
    }
    if w.contains('.') {
        return dotted_name(w);
    }
    is_ident(w).then_some((LiteralKind::Id, whole))
}

fn is_email(w: &str) -> bool {
    let w = w.strip_prefix("mailto:").unwrap_or(w);
    let Some((local, domain)) = w.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && local
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-'))
        && domain.contains('.')
        && domain
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
        && domain
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic()))
}

fn is_windows_path(w: &str) -> bool {
    let b = w.as_bytes();
    let drive = b.len() > 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\';
    drive || w.starts_with("\\\\") || (w.starts_with('%') && w.contains("%\\"))
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// YYYY-MM-DD, YYYY/MM/DD, DD.MM.YYYY, DD/MM/YYYY.
fn is_date(w: &str) -> bool {
    for sep in ['-', '/', '.'] {
        let parts: Vec<&str> = w.split(sep).collect();
        if parts.len() == 3 && parts.iter().all(|p| digits(p)) {
            let l: Vec<usize> = parts.iter().map(|p| p.len()).collect();
            let ymd = l[0] == 4 && (1..=2).contains(&l[1]) && (1..=2).contains(&l[2]);
            let dmy = (1..=2).contains(&l[0]) && (1..=2).contains(&l[1]) && l[2] == 4;
            if ymd || dmy {
                return true;
            }
        }
    }
    false
}

/// hh:mm, hh:mm:ss, hh:mm:ss.fff, with an optional attached zone (Z, +08:00).
fn is_time(w: &str) -> bool {
    let (t, _) = split_zone(w);
    let mut parts = t.split(':');
    let (Some(h), Some(m)) = (parts.next(), parts.next()) else {
        return false;
    };
    let s = parts.next();
    if parts.next().is_some() || !digits(h) || h.len() > 2 || m.len() != 2 || !digits(m) {
        return false;
    }
    let ok_hm = h.parse::<u32>().is_ok_and(|h| h <= 24) && m.parse::<u32>().is_ok_and(|m| m < 60);
    let ok_s = s.is_none_or(|s| {
        let (sec, frac) = s.split_once('.').unwrap_or((s, "0"));
        sec.len() == 2 && digits(sec) && digits(frac)
    });
    ok_hm && ok_s
}

/// Splits a trailing zone (Z, +08:00, -0500) off a time.
fn split_zone(w: &str) -> (&str, &str) {
    if let Some(t) = w.strip_suffix('Z') {
        return (t, "Z");
    }
    if let Some(p) = w.rfind(['+', '-'])
        && p > 0
    {
        let z = &w[p + 1..];
        let zd: String = z.chars().filter(|&c| c != ':').collect();
        if (zd.len() == 2 || zd.len() == 4) && digits(&zd) {
            return (&w[..p], &w[p..]);
        }
    }
    (w, "")
}

fn ends_with_zone(w: &str) -> bool {
    !split_zone(w).1.is_empty()
}

/// 2026-11-03T14:05:00Z and friends.
fn is_datetime(w: &str) -> bool {
    match w.split_once(['T', 't']) {
        Some((d, t)) => is_date(d) && is_time(t),
        None => false,
    }
}

fn is_zone(w: &str) -> bool {
    if matches!(w, "UTC" | "GMT" | "Z") {
        return true;
    }
    if let Some(off) = w.strip_prefix("UTC").or_else(|| w.strip_prefix("GMT")) {
        return off.starts_with(['+', '-'])
            && off[1..].chars().all(|c| c.is_ascii_digit() || c == ':');
    }
    if w.starts_with(['+', '-']) {
        let d: String = w[1..].chars().filter(|&c| c != ':').collect();
        return (d.len() == 2 || d.len() == 4) && digits(&d);
    }
    (3..=5).contains(&w.len())
        && w.bytes().all(|b| b.is_ascii_uppercase())
        && (w.ends_with('T') || w.ends_with("ST"))
}

/// Four dotted octets, with an optional port or prefix length.
fn is_ipv4_like(w: &str) -> bool {
    let (ip, rest) = match w.find([':', '/']) {
        Some(p) => (&w[..p], &w[p + 1..]),
        None => (w, ""),
    };
    let parts: Vec<&str> = ip.split('.').collect();
    let ok = parts.len() == 4
        && parts
            .iter()
            .all(|p| digits(p) && p.len() <= 3 && p.parse::<u32>().is_ok_and(|n| n <= 255));
    ok && (w.len() == ip.len() || digits(rest))
}

fn is_ipv6(w: &str) -> bool {
    let w = w.split('%').next().unwrap_or(w);
    let colons = w.matches(':').count();
    if !(w.contains("::") || colons == 7) || !(2..=7).contains(&colons) {
        return false;
    }
    let groups_ok = w
        .split(':')
        .all(|g| g.len() <= 4 && g.bytes().all(|b| b.is_ascii_hexdigit()));
    groups_ok && w.bytes().any(|b| b.is_ascii_digit()) && w.len() >= 3
}

fn is_hostname(h: &str) -> bool {
    !h.is_empty()
        && h.split('.').all(|l| {
            !l.is_empty()
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                && l.as_bytes()[0].is_ascii_alphanumeric()
        })
        && h.bytes().any(|b| b.is_ascii_alphabetic())
}

fn is_host_port(w: &str) -> bool {
    let Some((host, port)) = w.rsplit_once(':') else {
        return false;
    };
    digits(port)
        && port.len() <= 5
        && port.parse::<u32>().is_ok_and(|p| (1..=65_535).contains(&p))
        && is_hostname(host)
}

fn is_path(w: &str) -> bool {
    if !w.bytes().any(|b| b.is_ascii_alphanumeric()) {
        return false;
    }
    let rooted =
        w.starts_with('/') || w.starts_with("./") || w.starts_with("../") || w.starts_with("~/");
    if rooted {
        return w.len() >= 2;
    }
    let last = w.rsplit('/').next().unwrap_or("");
    let with_ext = last.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && !ext.is_empty()
            && ext.len() <= 10
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
    });
    let dir = w.ends_with('/') && w.len() > 2;
    let segments_ok = w.split('/').all(|s| {
        s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'.' | b'_' | b'-' | b'~' | b'*' | b'@' | b'+' | b'#' | b':'
                )
        })
    });
    segments_ok && (with_ext || dir)
}

fn is_version(w: &str) -> bool {
    let (v, prefixed) = match w.strip_prefix(['v', 'V']) {
        Some(v) => (v, true),
        None => (w, false),
    };
    let core_end = v.find(['-', '+']).unwrap_or(v.len());
    let (core, tail) = v.split_at(core_end);
    let parts: Vec<&str> = core.split('.').collect();
    let core_ok = parts.iter().all(|p| digits(p) && p.len() <= 6);
    let tail_ok = tail.is_empty()
        || (tail.len() > 1
            && tail[1..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+')));
    core_ok && tail_ok && (parts.len() == 3 || (prefixed && parts.len() >= 2 && parts.len() <= 4))
}

fn is_plain_int(w: &str) -> bool {
    digits(w.trim_start_matches(['-', '+']))
}

fn is_unit(w: &str) -> bool {
    let lower = w.to_lowercase();
    UNITS.contains(&lower.as_str())
}

/// `Some(true)` for a number worth keeping exactly, `Some(false)` for a number that is not
/// (a small plain integer), `None` for something that is not a number.
fn number_literal(w: &str) -> Option<bool> {
    let mut s = w.trim_start_matches(['+', '-', '−', '~', '≈']);
    let mut currency = false;
    for c in ['$', '€', '£', '¥'] {
        if let Some(r) = s.strip_prefix(c) {
            s = r;
            currency = true;
        }
    }
    let num_end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == ','))
        .map_or(s.len(), |(i, _)| i);
    let (num, suffix) = s.split_at(num_end);
    if num.is_empty() || !num.starts_with(|c: char| c.is_ascii_digit()) || num.ends_with(['.', ','])
    {
        return None;
    }
    let dots = num.matches('.').count();
    if dots > 1 {
        return None;
    }
    let thousands = num.contains(',');
    if thousands {
        let int = num.split('.').next().unwrap_or(num);
        let groups: Vec<&str> = int.split(',').collect();
        if groups[0].len() > 3 || groups[1..].iter().any(|g| g.len() != 3) {
            return None;
        }
    }
    let lower = suffix.to_lowercase();
    let percent = lower == "%";
    let unit = !lower.is_empty()
        && (UNITS.contains(&lower.as_str()) || MAGNITUDE_SUFFIX.contains(&lower.as_str()));
    if !lower.is_empty() && !percent && !unit {
        return None;
    }
    let int_digits = num
        .split('.')
        .next()
        .map_or(0, |i| i.bytes().filter(u8::is_ascii_digit).count());
    Some(dots == 1 || currency || percent || unit || thousands || int_digits >= 5)
}

fn is_uuid(w: &str) -> bool {
    let parts: Vec<&str> = w.split('-').collect();
    parts.len() == 5
        && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn is_hash(w: &str) -> bool {
    w.len() >= 7
        && w.bytes().all(|b| b.is_ascii_hexdigit())
        && w.bytes().any(|b| b.is_ascii_digit())
        && w.bytes().any(|b| b.is_ascii_alphabetic())
        && (w.bytes().all(|b| !b.is_ascii_uppercase())
            || w.bytes().all(|b| !b.is_ascii_lowercase()))
}

/// ABC-1234.
fn is_ticket(w: &str) -> bool {
    let Some((p, n)) = w.split_once('-') else {
        return false;
    };
    p.len() >= 2
        && p.len() <= 10
        && p.as_bytes()[0].is_ascii_uppercase()
        && p.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && digits(n)
}

/// Host names, file names and dotted keys: `db-2.corp.internal`, `q3_report.xlsx`,
/// `retry.backoff_ms`.
fn dotted_name(w: &str) -> Option<(LiteralKind, (usize, usize))> {
    let segs: Vec<&str> = w.split('.').collect();
    let ok = segs.len() >= 2
        && segs.iter().all(|s| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
        && segs
            .iter()
            .any(|s| s.len() >= 2 && s.bytes().any(|b| b.is_ascii_alphabetic()))
        && segs.iter().filter(|s| s.len() >= 2).count() >= 2 - usize::from(segs.len() > 2);
    if !ok {
        return None;
    }
    let ext = segs
        .last()
        .map(|s| s.to_ascii_lowercase())
        .unwrap_or_default();
    let kind = if FILE_EXTS.contains(&ext.as_str()) {
        LiteralKind::Path
    } else {
        LiteralKind::Id
    };
    Some((kind, (0, w.len())))
}

/// Identifiers with letters and digits (`ACC-12345`, `x86_64`, `2024Q3`), or snake_case.
fn is_ident(w: &str) -> bool {
    if !w
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        || !w.as_bytes()[0].is_ascii_alphanumeric() && w.as_bytes()[0] != b'_'
    {
        return false;
    }
    let letters = w.bytes().any(|b| b.is_ascii_alphabetic());
    let has_digits = w.bytes().any(|b| b.is_ascii_digit());
    if letters && has_digits && w.len() >= 4 {
        let lower = w.to_ascii_lowercase();
        let d = lower.trim_start_matches(|c: char| c.is_ascii_digit());
        let ordinal_or_factor =
            d.len() < lower.len() && matches!(d, "st" | "nd" | "rd" | "th" | "x");
        return !ordinal_or_factor;
    }
    letters && w.contains('_') && w.trim_matches('_').len() >= 3
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EstimateCounter;

    fn src(role: Role, content: &str) -> Source<'_> {
        Source {
            role,
            content,
            tool_calls: &[],
            tool_call_id: None,
        }
    }

    fn lits(text: &str, prose: bool) -> Vec<String> {
        let mut v = Vec::new();
        scan_literals(text, prose, &mut |t, _| v.push(t.to_string()));
        v
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
                Role::User,
                "Goal: ship v2 to /srv/app/v2.tar. Don't touch prod.",
            ),
            src(Role::Assistant, "Decision: use ACC-9."),
            src(
                Role::Assistant,
                "The log says 2026-11-03 14:05 UTC and 12.5 ms.",
            ),
        ];
        for (i, c) in calls.iter().enumerate() {
            sources.push(Source {
                role: Role::Assistant,
                content: "",
                tool_calls: std::slice::from_ref(c),
                tool_call_id: None,
            });
            sources.push(Source {
                role: Role::Tool,
                content: if i % 3 == 0 {
                    "exit 1\nnope"
                } else {
                    "exit 0\n42"
                },
                tool_calls: &[],
                tool_call_id: Some(&c.id),
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
    fn literal_classifier() {
        assert_eq!(
            lits(
                "and/or Q3 exit_code=0 0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a6b src/main.rs 5ms 20 %",
                false
            ),
            vec![
                "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a6b",
                "src/main.rs",
                "5ms",
                "20 %"
            ]
        );
        let cases = [
            ("set the threshold 0.8375 now", "0.8375"),
            ("db at 10.20.30.40:5432 ok", "10.20.30.40:5432"),
            (
                "use pg-replica-2.corp.internal:6432 instead",
                "pg-replica-2.corp.internal:6432",
            ),
            ("cache redis-03:6379.", "redis-03:6379"),
            (
                "v6 is 2001:db8:85a3::8a2e:370:7334 here",
                "2001:db8:85a3::8a2e:370:7334",
            ),
            ("commit 9f3c2ab1 fixed it", "9f3c2ab1"),
            (
                "raw data in s3://acme-raw/2026/q3/ now",
                "s3://acme-raw/2026/q3/",
            ),
            ("mail ops.lead@example.org please", "ops.lead@example.org"),
            ("upgrade to v2.14.1, then", "v2.14.1"),
            ("tag 1.2.3-rc.1 is out", "1.2.3-rc.1"),
            ("due 2026-11-03 14:05 UTC sharp", "2026-11-03 14:05 UTC"),
            ("at 2026-11-03T14:05:00+08:00.", "2026-11-03T14:05:00+08:00"),
            ("by Nov 3, 2026 please", "Nov 3, 2026"),
            ("see DATA-4821 and #1287", "DATA-4821"),
            ("see DATA-4821 and #1287", "#1287"),
            (
                "the key `ingest.max_batch_rows` is",
                "`ingest.max_batch_rows`",
            ),
            ("name it \"Q3 final (v3)\" ok", "\"Q3 final (v3)\""),
            ("表名叫「季度汇总表」。", "「季度汇总表」"),
            ("open ~/reports/q3_draft.xlsx", "~/reports/q3_draft.xlsx"),
            (
                r"open C:\Users\ana\recon.xlsx now",
                r"C:\Users\ana\recon.xlsx",
            ),
            ("rate 12.5% and 3.2 GB and 450ms", "12.5%"),
            ("rate 12.5% and 3.2 GB and 450ms", "3.2 GB"),
            ("rate 12.5% and 3.2 GB and 450ms", "450ms"),
            ("阈值改成0.8375，端口是db-7.internal:5432。", "0.8375"),
            (
                "阈值改成0.8375，端口是db-7.internal:5432。",
                "db-7.internal:5432",
            ),
            ("截止2026年11月3日 14:05", "2026年11月3日 14:05"),
            ("paid €1,250.00 today", "€1,250.00"),
            (
                "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            ),
        ];
        for (text, want) in cases {
            let found = lits(text, true);
            assert!(
                found.iter().any(|l| l == want),
                "{want} not in {found:?} ({text})"
            );
        }
        for text in [
            "e.g. the 3rd time, 2x faster, no-op, and/or, it's fine, don't, 42 items? no",
            "Rows with a null customer id are excluded from the join.",
        ] {
            let found = lits(text, true);
            assert!(
                found.iter().all(|l| l == "42 items"),
                "{found:?} from {text}"
            );
        }
    }

    #[test]
    fn decisions_and_constraints_in_both_languages() {
        let cases_decision = [
            "用户确认选择 A（而非 B）。",
            "ok, we'll use the median.",
            "Let's go with Parquet.",
            "We decided to drop batch 7.",
            "Use LEFT JOIN instead of INNER JOIN.",
            "改用中位数。",
            "最终采用方案二。",
        ];
        for s in cases_decision {
            assert!(Cues::of(s).decision, "{s}");
        }
        let cases_constraint = [
            "约束：只统计欧盟区。",
            "Please don't touch prod before Friday.",
            "报告里不要出现客户姓名。",
            "No PII in the export.",
            "You must keep it under 50 MB.",
            "不需要画图。",
            "禁止外发。",
            "不得超过 3 页。",
            "Only use the EU region.",
        ];
        for s in cases_constraint {
            assert!(Cues::of(s).constraint, "{s}");
        }
        assert!(!Cues::of("Can we go with Parquet?").decision);
        assert!(!Cues::of("No, thanks.").constraint);
        assert_eq!(
            sentences("目标：汇总。约束：只看欧盟；不要画图！好吗？ok. next\nline"),
            vec![
                "目标：汇总。",
                "约束：只看欧盟；",
                "不要画图！",
                "好吗？",
                "ok.",
                "next",
                "line"
            ]
        );
    }

    #[test]
    fn the_goal_message_stays_whole_and_its_constraints_are_kept() {
        let goal =
            "目标：核对第三季度发票。约束：只使用欧盟区数据，报告里不要出现客户姓名。阈值 0.8375。";
        let d = Digest::from_sources([src(Role::User, goal), src(Role::User, "好的")]);
        assert_eq!(d.goal, vec![goal]);
        assert_eq!(d.constraints.len(), 1, "{:?}", d.constraints);
        let text = d.render(Detail::Deep);
        assert_eq!(text.matches("约束：只使用欧盟区数据").count(), 1, "{text}");
        // A tight budget cuts the goal, but its constraint and literal survive apart from it.
        let long_goal = format!("{goal}{}", "背景说明。".repeat(400));
        let d = Digest::from_sources([src(Role::User, &long_goal)]);
        let (small, tokens) = d.render_budgeted(Detail::Standard, 300, &EstimateCounter);
        assert!(tokens <= 300, "{tokens}");
        assert!(small.contains("约束：只使用欧盟区数据"), "{small}");
        assert!(small.contains("0.8375"), "{small}");
    }

    #[test]
    fn later_ranges_do_not_take_a_user_message_as_the_goal() {
        let d = Digest::from_continuation([src(Role::User, "Remember to check 12.5 ms.")]);
        assert!(d.goal.is_empty());
        let d = Digest::from_continuation([src(Role::User, "New goal: find the 0.8375 cut.")]);
        assert_eq!(d.goal.len(), 1);
    }

    #[test]
    fn repeated_operations_are_grouped_and_do_not_eat_the_budget() {
        let mut msgs: Vec<(ToolCall, String)> = Vec::new();
        for i in 0..2_000 {
            let cmd = if i % 2 == 0 {
                "grep -c ERROR app.log".to_string()
            } else {
                format!("wc -l /data/exports/part-{i:05}.csv")
            };
            msgs.push((
                ToolCall {
                    id: format!("c{i}"),
                    name: "shell".into(),
                    arguments: serde_json::json!({ "cmd": cmd }).to_string(),
                },
                format!("exit code {}\n{}", i % 7 / 6, 400 + i),
            ));
        }
        let mut sources = vec![src(Role::User, "Goal: count errors. Threshold 0.8375.")];
        for (c, out) in &msgs {
            sources.push(Source {
                role: Role::Assistant,
                content: "",
                tool_calls: std::slice::from_ref(c),
                tool_call_id: None,
            });
            sources.push(Source {
                role: Role::Tool,
                content: out,
                tool_calls: &[],
                tool_call_id: Some(&c.id),
            });
        }
        sources.push(src(
            Role::Assistant,
            "Found the culprit at https://ci.example.com/run/77.",
        ));
        let d = Digest::from_sources(sources);
        let text = d.render(Detail::Deep);
        assert!(
            text.contains("- shell cmd=grep -c ERROR app.log ×1000 → exit 0×857, 1×143"),
            "{text}"
        );
        assert!(text.contains("shell cmd=wc -l /data/exports/part-*.csv ×1000 (1000 variants)"));
        let (small, tokens) = d.render_budgeted(Detail::Deep, 400, &EstimateCounter);
        assert!(tokens <= 400);
        for keep in [
            "0.8375",
            "https://ci.example.com/run/77",
            "grep -c ERROR app.log ×1000",
        ] {
            assert!(small.contains(keep), "{keep} lost in\n{small}");
        }
        assert!(small.contains("- folded literals: path×"), "{small}");
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
