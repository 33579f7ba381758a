//! The reviewer's input: the task, the focus, the findings still open, and the history in the
//! chosen mode, within a token budget for the reviewer's model.
//!
//! `full_history` covers every live message: the summaries stored with the conversation and the
//! pinned messages they cover, then everything after them, verbatim when it fits, otherwise the
//! newest verbatim and the older part summarised for this review ([`super::history`]). A full
//! review of a history far above the budget is planned in passes instead ([`super::passes`]).
//! An incremental review and `recent_messages` cover their range the same way, without the
//! stored summaries. Tokens are the store's counts, cached per message, so building the input
//! never tokenizes the history again; the text says how each part reaches the reviewer.

use std::fmt::Write as _;

use decima_core::{ConversationId, TokenCounter};
use decima_store::{Conversation, Finding, Store};
use tracing::warn;

use super::ReviewMode;
use super::history::{self, Part, Reach, SECTION_TOKENS, Stored, describe_all, seqs};
use super::passes;
use crate::error::Result;

pub use super::history::HEADER_TOKENS;

/// Tokens kept for the statement that opens each pass (what the passes cover, which one this
/// is), beyond [`SECTION_TOKENS`].
const PASS_INTRO_TOKENS: u32 = 240;

/// The input: one request's, or one per pass.
#[derive(Debug, Clone)]
pub struct Input {
    /// The requests, in order: one, or the passes of a full review far above the budget.
    pub passes: Vec<PassInput>,
    /// The first seq it reads from (0: from the start, through summaries).
    pub from_seq: i64,
    /// Messages shown verbatim (in any pass; those shown in every pass count once).
    pub shown: usize,
    /// Live messages that reach the reviewer through a summary made for this review.
    pub summarised: u64,
    /// Messages read from the store to make those summaries (0 when they came from the cache).
    pub summary_read: u64,
}

impl Input {
    /// Store tokens of every request's input, summed.
    pub fn tokens(&self) -> u32 {
        self.passes.iter().map(|p| p.tokens).sum()
    }

    /// The first request's text (the whole input when there is one request).
    pub fn text(&self) -> &str {
        self.passes.first().map_or("", |p| p.text.as_str())
    }
}

/// One request's input, and what of the history it covers.
#[derive(Debug, Clone)]
pub struct PassInput {
    /// The user message sent to the reviewer.
    pub text: String,
    /// Its size in store tokens (cached counts plus the counted fixed parts).
    pub tokens: u32,
    /// The first seq of the history it covers (0 for given content).
    pub from_seq: i64,
    /// The last seq of the history it covers (0 for given content).
    pub through_seq: i64,
    /// The seqs summarised for the review in it, if any.
    pub summarised: Option<(i64, i64)>,
    /// The seqs shown verbatim in it, if any (besides where the history stands now).
    pub verbatim: Option<(i64, i64)>,
}

/// What the input is made of.
pub struct Parts<'a> {
    /// The conversation.
    pub conversation: &'a Conversation,
    /// The original task.
    pub task: &'a str,
    /// The focus, if any.
    pub focus: Option<&'a str>,
    /// The mode.
    pub mode: &'a ReviewMode,
    /// Findings of earlier reviews still open.
    pub open: &'a [Finding],
    /// Read only what came after this seq (an incremental review), if set.
    pub after_seq: Option<i64>,
    /// The token budget of each request's input (store tokens).
    pub budget: u32,
    /// Whether a history far above the budget may be read in passes (a full review); else
    /// it is read in one request, with summaries.
    pub passes: bool,
}

/// Builds the input.
pub async fn build(store: &Store, parts: &Parts<'_>, counter: &dyn TokenCounter) -> Result<Input> {
    let head = head(parts);
    let fixed = counter.count_text(&head);
    let room = parts
        .budget
        .saturating_sub(fixed)
        .saturating_sub(SECTION_TOKENS);
    let id = parts.conversation.id;
    let (heading, scope, after, stored) = match (parts.mode, parts.after_seq) {
        (ReviewMode::SpecificContent { content }, _) => {
            return Ok(given_content(head, fixed, content, room, counter));
        }
        (ReviewMode::RecentMessages { count }, _) => {
            let first = store.messages().nth_newest_seq(id, *count).await?;
            (
                format!("# The last {count} messages"),
                format!("each of the last {count} messages"),
                first.map_or(0, |s| s - 1),
                Stored::none(),
            )
        }
        (ReviewMode::FullHistory, Some(after)) => (
            format!(
                "# New messages since the last review (seq > {after}); earlier ones were reviewed"
            ),
            format!("every live message after seq {}", history::thousands(after)),
            after,
            Stored::none(),
        ),
        (ReviewMode::FullHistory, None) => {
            let stored = Stored::load(store, id).await?;
            if parts.passes
                && let Some(planned) =
                    far_above_in_passes(store, id, &stored, room, counter).await?
            {
                return Ok(in_passes(&head, fixed, planned, parts.budget, counter));
            }
            let after = stored.frontier;
            (
                "# The history".to_owned(),
                "every live message".to_owned(),
                after,
                stored,
            )
        }
    };
    let history =
        history::one_request(store, id, &stored, (after, i64::MAX), room, counter).await?;
    Ok(in_one_request(
        head, fixed, &heading, &scope, &history, counter,
    ))
}

/// The input of a review of given content: the head, then the content cut to fit `room`.
fn given_content(
    head: String,
    fixed: u32,
    content: &str,
    room: u32,
    counter: &dyn TokenCounter,
) -> Input {
    let (text, tokens) = content_within(content, room, counter);
    let text = format!("{head}# The content to review\n{text}\n");
    Input {
        passes: vec![PassInput {
            text,
            tokens: fixed.saturating_add(tokens),
            from_seq: 0,
            through_seq: 0,
            summarised: None,
            verbatim: None,
        }],
        from_seq: 0,
        shown: 0,
        summarised: 0,
        summary_read: 0,
    }
}

/// The passes a full history is read in when it is far above `room`; `None` when it is read in
/// one request, with summaries.
async fn far_above_in_passes(
    store: &Store,
    id: ConversationId,
    stored: &Stored,
    room: u32,
    counter: &dyn TokenCounter,
) -> Result<Option<passes::Passes>> {
    let totals = store
        .messages()
        .totals_between(id, stored.frontier, i64::MAX)
        .await?;
    let need = stored.tokens() + history::estimate(totals);
    let pass_room = room.saturating_sub(PASS_INTRO_TOKENS);
    if !passes::far_above(need, room) {
        return Ok(None);
    }
    let planned = passes::plan(store, id, stored, pass_room, counter).await?;
    Ok(Some(planned))
}

/// The input of a review read in one request: the head, what of the history reaches the
/// reviewer and how (under `heading`, covering `scope`), then the history's parts.
fn in_one_request(
    head: String,
    fixed: u32,
    heading: &str,
    scope: &str,
    history: &[Part],
    counter: &dyn TokenCounter,
) -> Input {
    let mut text = head;
    let _ = writeln!(text, "{heading}");
    if history.is_empty() {
        text.push_str("(none)\n");
    } else {
        let _ = writeln!(
            text,
            "Of the history, {scope} reaches you: {}. Cite seqs from the `### seq=N` headers, or \
             within the seq range of a summary.\n",
            describe_all(history)
        );
    }
    let intro = counter.count_text(&text).saturating_sub(fixed);
    for p in history {
        text.push_str(&p.text);
    }
    let tokens = fixed
        .saturating_add(intro)
        .saturating_add(history.iter().map(|p| p.tokens).sum());
    let first = history.first().map_or(0, |p| p.from);
    let from_seq = if stored_covers_start(history) {
        0
    } else {
        first
    };
    let pass = pass_input(text, tokens, history);
    Input {
        from_seq,
        shown: history.iter().map(|p| p.shown).sum(),
        summarised: history.iter().map(|p| p.summarised).sum(),
        summary_read: history.iter().map(|p| p.read).sum(),
        passes: vec![pass],
    }
}

/// The task, the focus and the open findings: the same in every request of a review.
fn head(parts: &Parts<'_>) -> String {
    let mut head = String::new();
    let _ = writeln!(head, "# The task\n{}\n", parts.task.trim());
    let _ = writeln!(
        head,
        "# Focus\n{}\n",
        parts
            .focus
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .unwrap_or("None given: review the current conclusion as a whole.")
    );
    if !parts.open.is_empty() {
        head.push_str("# Findings of earlier reviews that are still open\n");
        head.push_str(
            "Check each against the history below. Close one (closed_findings) only if the \
             history shows it no longer holds.\n",
        );
        for f in parts.open {
            let _ = writeln!(
                head,
                "- id={} [{}] {}: {} (evidence seqs {:?}; recommended: {})",
                f.id,
                f.body.severity,
                f.body.title,
                f.body.argument,
                f.body.evidence_seqs,
                f.body.recommendation
            );
        }
        head.push('\n');
    }
    head
}

/// Whether the parts start with the stored summaries (the review reads from the start).
fn stored_covers_start(parts: &[Part]) -> bool {
    parts.first().is_some_and(|p| p.reach == Reach::Stored)
}

/// A request's input and what it covers, from its parts.
fn pass_input(text: String, tokens: u32, parts: &[Part]) -> PassInput {
    let range = |reach: Reach| {
        let of: Vec<&Part> = parts.iter().filter(|p| p.reach == reach).collect();
        Some((of.first()?.from, of.last()?.through))
    };
    PassInput {
        text,
        tokens,
        from_seq: parts.first().map_or(0, |p| p.from),
        through_seq: parts.last().map_or(0, |p| p.through),
        summarised: range(Reach::Summarised),
        verbatim: range(Reach::Verbatim),
    }
}

/// Consecutive parts of the same kind, as one: the passes' verbatim chunks read as one range.
fn coalesce(parts: &[&Part]) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::new();
    for p in parts {
        match out.last_mut() {
            Some(last) if last.reach == p.reach => last.through = p.through,
            _ => out.push(Part {
                text: String::new(),
                ..(*p).clone()
            }),
        }
    }
    out
}

/// The passes' inputs: each with the head, what the passes cover and which one it is, its own
/// parts, and where the history stands now.
fn in_passes(
    head: &str,
    fixed: u32,
    planned: passes::Passes,
    budget: u32,
    counter: &dyn TokenCounter,
) -> Input {
    let n = planned.passes.len();
    let all: Vec<&Part> = planned.passes.iter().flatten().collect();
    let mut overall = describe_all(&coalesce(&all));
    if let Some(now) = &planned.now {
        if !overall.is_empty() {
            overall.push_str(", and ");
        }
        let _ = write!(
            overall,
            "{}, where the history stands now, verbatim in every pass",
            seqs(now.from, now.through)
        );
    }
    let now_tokens = planned.now.as_ref().map_or(0, |p| p.tokens);
    let mut inputs = Vec::with_capacity(n);
    for (k, own) in planned.passes.iter().enumerate() {
        let mut text = head.to_owned();
        let _ = writeln!(
            text,
            "# The history, pass {} of {n}\nThe history is too long for one request, so this \
             review reads it in {n} passes and merges their findings. Across them every live \
             message reaches you: {overall}. This is pass {} of {n}: it shows {}{}. Argue from \
             what this pass shows against the current conclusion, and cite seqs from the \
             `### seq=N` headers or within the seq range of a summary.\n",
            k + 1,
            k + 1,
            describe_all(own),
            if planned.now.is_some() {
                ", then where the history stands now"
            } else {
                ""
            }
        );
        let intro = counter.count_text(&text).saturating_sub(fixed);
        for p in own {
            text.push_str(&p.text);
        }
        if let Some(now) = &planned.now {
            text.push_str(&now.text);
        }
        let tokens = fixed
            .saturating_add(intro)
            .saturating_add(own.iter().map(|p| p.tokens).sum())
            .saturating_add(now_tokens);
        if tokens > budget {
            warn!(pass = k + 1, tokens, budget, "a pass is above the budget");
        }
        inputs.push(pass_input(text, tokens, own));
    }
    Input {
        from_seq: 0,
        shown: all.iter().map(|p| p.shown).sum::<usize>()
            + planned.now.as_ref().map_or(0, |p| p.shown),
        summarised: all.iter().map(|p| p.summarised).sum(),
        summary_read: all.iter().map(|p| p.read).sum(),
        passes: inputs,
    }
}

/// The content, cut at a line break to fit `room` when it is longer.
fn content_within(content: &str, room: u32, counter: &dyn TokenCounter) -> (String, u32) {
    let tokens = counter.count_text(content);
    if tokens <= room {
        return (content.to_owned(), tokens);
    }
    // Cut by the measured ratio, then back to a line break, and say so.
    let keep_bytes =
        (content.len() as f64 * f64::from(room) / f64::from(tokens.max(1)) * 0.95) as usize;
    let mut end = keep_bytes.min(content.len());
    while end > 0 && !content.is_char_boundary(end) {
        end -= 1;
    }
    if let Some(nl) = content[..end].rfind('\n') {
        end = nl;
    }
    let text = format!(
        "{}\n(the content is cut here: {} of {} tokens fit the budget)",
        &content[..end],
        room,
        tokens
    );
    let counted = counter.count_text(&text);
    (text, counted)
}
