//! How the builder reads a prose message (the user's or the assistant's): the goal, its
//! literals and blocks, then each sentence in turn, as a todo, the goal, a constraint, a
//! decision, a restatement or statements.

use std::hash::BuildHasher;

use super::{Builder, SENTENCE_CHARS};
use crate::Speaker;
use crate::blocks::{Blocks, blocks};
use crate::corrections::correction;
use crate::cues::{Cues, is_todo, says_goal, sentences, todo_key};
use crate::facts::Home;
use crate::labels::{Labelled, label_line};
use crate::literals::{Origin, scan_literals};
use crate::restatements::{asks_to_confirm, is_list_item, opens_list, restates};
use crate::sentence_reading::{
    REFERRED_SENTENCES, answers_own_question, literals_in, names_a_correction, refers_back,
};
use crate::text::truncate;
use crate::values::Span;
use crate::{GOAL_CHARS, StatementKind};

/// A prose message being read sentence by sentence: what the reading of each sentence needs.
struct ProseMessage<'t> {
    /// The whole message.
    text: &'t str,
    /// Whether the user wrote it.
    user: bool,
    /// Whether the whole message was kept as the goal.
    whole_goal: bool,
    /// Who said it, for its statements.
    origin: Origin,
    /// The scope its labelled lines replace each other in.
    scope: &'static str,
    /// The spans of its literals, sorted.
    lits: Vec<Span>,
    /// Its code blocks and tables, whose lines are not read as sentences.
    blocks: Blocks,
    /// Its sentences.
    all: Vec<&'t str>,
    /// Which sentences a request to confirm after them makes restatements.
    confirmed: Vec<bool>,
}

/// What the reading of one sentence passes on to the next.
#[derive(Default)]
struct Between<'t> {
    /// The sentence before was a restatement, so the items of the list it opened are too.
    restating: bool,
    /// A correction that named its subject but stated no value (its part of the sentence, and
    /// the subject): the next sentence states the value.
    carry: Option<(&'t str, String)>,
}

/// Which sentences of an assistant message a request to confirm ("Shout if that's wrong.",
/// "没问题的话我就开始了。") makes restatements: the sentence before it, or the list before it
/// and the line that opened the list.
fn confirmed_by_request(all: &[&str]) -> Vec<bool> {
    let mut confirmed = vec![false; all.len()];
    for k in 1..all.len() {
        if !asks_to_confirm(all[k]) || restates(all[k]) {
            continue;
        }
        let mut j = k - 1;
        confirmed[j] = true;
        while j > 0 && is_list_item(all[j]) {
            j -= 1;
            confirmed[j] = true;
        }
    }
    confirmed
}

impl Builder {
    /// Reads a user's or the assistant's message: the goal, its literals and blocks, then each
    /// sentence in turn.
    pub(super) fn prose(&mut self, role: Speaker, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        let user = role == Speaker::User;
        let whole_goal = self.message_goal(user, text);
        let origin = if user { Origin::User } else { Origin::Prose };
        let lits = self.message_literals(text, origin);
        let mut blocks = blocks(text);
        let scope = if user { "user" } else { "assistant" };
        for l in std::mem::take(&mut blocks.facts) {
            self.labelled(l, origin, None, scope);
        }
        let all = sentences(text);
        let confirmed = if user {
            vec![false; all.len()]
        } else {
            confirmed_by_request(&all)
        };
        let msg = ProseMessage {
            text,
            user,
            whole_goal,
            origin,
            scope,
            lits,
            blocks,
            all,
            confirmed,
        };
        let mut between = Between::default();
        for k in 0..msg.all.len() {
            self.prose_sentence(&msg, k, &mut between);
        }
    }

    /// Whether a user message is the goal as a whole (the conversation's first, or one that says
    /// it is a goal), keeping it as the goal if so.
    fn message_goal(&mut self, user: bool, text: &str) -> bool {
        let whole_goal = user && (self.starts_conversation && !self.goal_taken || says_goal(text));
        if user {
            self.goal_taken = true;
        }
        if whole_goal {
            self.add_goal(truncate(text.trim(), GOAL_CHARS));
        }
        whole_goal
    }

    /// Adds a goal line, once.
    fn add_goal(&mut self, g: String) {
        if self.seen_goal.insert(g.clone()) {
            self.d.goal.push(g);
        }
    }

    /// Records a message's literals once for the whole message, returning their spans (sorted)
    /// for its statements to take.
    fn message_literals(&mut self, text: &str, origin: Origin) -> Vec<Span> {
        let mut lits: Vec<Span> = Vec::new();
        scan_literals(text, true, &mut |t, k| {
            let at = t.as_ptr() as usize - text.as_ptr() as usize;
            lits.push((at, at + t.len()));
            self.literal(t, k, origin, None);
        });
        lits.sort_unstable();
        lits
    }

    /// Reads sentence `k` of a prose message: a todo, the goal, a constraint, a decision, a
    /// restatement or statements.
    fn prose_sentence<'t>(&mut self, msg: &ProseMessage<'t>, k: usize, between: &mut Between<'t>) {
        let mut sentence = msg.all[k].trim();
        if sentence.is_empty() {
            return;
        }
        let mut at = sentence.as_ptr() as usize - msg.text.as_ptr() as usize;
        let in_block = msg.blocks.contains(at);
        if is_todo(sentence) {
            self.todo(sentence);
            return;
        }
        // "缺失地区还是用账单国家吧？嗯，就账单国家": the user answers their own question by
        // naming its choice again; both together are the decision.
        let answered = msg.user && k > 0 && answers_own_question(msg.all[k - 1], sentence);
        if answered {
            let question = msg.all[k - 1].trim_start();
            let from = question.as_ptr() as usize - msg.text.as_ptr() as usize;
            sentence = msg.text[from..at + sentence.len()].trim();
            at = from;
        }
        // Chat repeats itself ("Any progress?", the same report line): what a sentence says
        // on its own is read once.
        let h = self.memo.hasher().hash_one((msg.user, sentence));
        let (mut cues, quiet) = match self.memo.get(&h) {
            Some(&(cues, quiet)) => (cues, quiet),
            None => (Cues::of(sentence), false),
        };
        cues.decision |= answered;
        // A restatement says so, or is followed by a request to confirm it ("Shout if
        // that's wrong."), or is an item of a list a restatement opened.
        let says_so = !msg.user && !quiet && cues.may_restate && restates(sentence);
        let restated = !msg.user
            && !in_block
            && (says_so || msg.confirmed[k] || between.restating && is_list_item(sentence));
        between.restating = restated && (opens_list(sentence) || between.restating);
        let (home, sentence, at) = self.file_sentence(msg, k, (sentence, at), cues, restated);
        self.memo.entry(h).or_insert((cues, false));
        if in_block || quiet && !restated {
            return;
        }
        let stated = if msg.user {
            self.user_sentence(msg, sentence, at, &home, &mut between.carry)
        } else {
            self.assistant_sentence(msg, sentence, at, &home, restated)
        };
        if !stated && home == Home::Listed && !says_so {
            // Nothing to read in it: the next time it is said, it is skipped.
            self.memo.insert(h, (cues, true));
        }
    }

    /// Keeps a todo line; a later line for the same todo replaces it.
    fn todo(&mut self, sentence: &str) {
        let key = todo_key(sentence);
        match self.todo_at.get(&key) {
            Some(&i) => self.d.todos[i] = sentence.to_string(),
            None => {
                self.todo_at.insert(key, self.d.todos.len());
                self.d.todos.push(sentence.to_string());
            }
        }
    }

    /// Keeps a sentence (at its offset) as the goal, a constraint or a decision when its cues
    /// say so, and returns where it is kept with the sentence and offset kept (a decision that
    /// refers back takes in the sentences it decides).
    fn file_sentence<'t>(
        &mut self,
        msg: &ProseMessage<'t>,
        k: usize,
        (sentence, at): (&'t str, usize),
        cues: Cues,
        restated: bool,
    ) -> (Home, &'t str, usize) {
        if !msg.whole_goal && cues.goal {
            self.add_goal(truncate(sentence, SENTENCE_CHARS));
            (Home::Listed, sentence, at)
        } else if msg.user
            && cues.constraint
            // "改主意了，日切时区用UTC，不用Asia/Shanghai": a correction, not a rule.
            && correction(sentence, &[]).is_none_or(|c| !c.strong)
        {
            (self.keep_constraint(sentence), sentence, at)
        } else if cues.decision && !restated {
            // "let's do that" decides what the sentences before it said: they are the
            // decision ("I think Pro for Legacy tier? yes. Pro. let's do that").
            let (sentence, at) = if k > 0 && refers_back(sentence) {
                let first = msg.all[k.saturating_sub(REFERRED_SENTENCES)];
                let from = first.as_ptr() as usize - msg.text.as_ptr() as usize;
                let text = msg.text;
                (
                    text[from..at + sentence.len()].trim(),
                    from + (text[from..].len() - text[from..].trim_start().len()),
                )
            } else {
                (sentence, at)
            };
            (self.keep_decision(sentence), sentence, at)
        } else {
            (Home::Listed, sentence, at)
        }
    }

    /// Keeps a user's rule as a constraint (stated again, it is counted and current again).
    fn keep_constraint(&mut self, sentence: &str) -> Home {
        let c = truncate(sentence, SENTENCE_CHARS);
        self.statements += 1;
        if self
            .seen_constraints
            .insert(c.clone(), self.statements)
            .is_none()
        {
            self.d.constraints.push(c.clone());
        } else {
            *self.d.stated.entry(c.clone()).or_insert(1) += 1;
        }
        Home::Constraint(c)
    }

    /// Keeps a decision (stated again, it is counted and current again).
    fn keep_decision(&mut self, sentence: &str) -> Home {
        let c = truncate(sentence, SENTENCE_CHARS);
        self.statements += 1;
        if self
            .seen_decisions
            .insert(c.clone(), self.statements)
            .is_none()
        {
            self.d.decisions.push(c.clone());
        } else {
            *self.d.stated.entry(c.clone()).or_insert(1) += 1;
        }
        Home::Decision(c)
    }

    /// Reads a user sentence's statements, or joins it to the correction the sentence before
    /// named the subject of. Returns whether it stated anything (or named such a correction).
    fn user_sentence<'t>(
        &mut self,
        msg: &ProseMessage<'t>,
        sentence: &'t str,
        at: usize,
        home: &Home,
        carry: &mut Option<(&'t str, String)>,
    ) -> bool {
        // "the refund window I gave you was the draft figure. the signed-off one is 21
        // days": a correction naming its subject, then its value in the next sentence.
        if let Some((before, named)) = carry.take() {
            self.joined_correction(before, sentence, named);
            return true;
        }
        let inner = literals_in(&msg.lits, at, sentence.len());
        if self.user_statements(sentence, &inner, home.clone()) {
            return true;
        }
        if let Some(named) = self.facts.subject_named_in(sentence)
            && let Some(part) = names_a_correction(sentence, &named)
        {
            *carry = Some((part, named));
            return true;
        }
        false
    }

    /// Reads a correction that named its subject (`named`) in the sentence `before` and states
    /// its value in `sentence`, as one statement of its own: the sentence alone says nothing of
    /// its subject, wherever it is listed.
    fn joined_correction(&mut self, before: &str, sentence: &str, named: String) {
        let joined = format!("{before} {sentence}");
        let mut inner: Vec<Span> = Vec::new();
        scan_literals(&joined, true, &mut |t, _| {
            let s = t.as_ptr() as usize - joined.as_ptr() as usize;
            inner.push((s, s + t.len()));
        });
        inner.sort_unstable();
        self.named = Some(named);
        self.user_statements(&joined, &inner, Home::Listed);
        self.named = None;
    }

    /// Reads an assistant sentence: a restatement, a report line or a statement of a spaced
    /// value. Returns whether it stated anything.
    fn assistant_sentence(
        &mut self,
        msg: &ProseMessage<'_>,
        sentence: &str,
        at: usize,
        home: &Home,
        restated: bool,
    ) -> bool {
        if restated {
            self.restatement(sentence);
            return true;
        }
        if *home != Home::Listed {
            return true;
        }
        if !asks_to_confirm(sentence)
            && let Some((label, value)) = label_line(sentence)
        {
            // A report line of the agent's: "Churn rate: 3.4%"; each line its own (an
            // "Updated:" line does not replace the last one).
            let l = Labelled {
                key: format!("{label}: {value}"),
                text: format!("{label}: {value}"),
                kind: StatementKind::Labelled,
            };
            self.labelled(l, msg.origin, None, msg.scope);
            return true;
        }
        self.assistant_statements(sentence, at, &msg.lits)
    }
}
