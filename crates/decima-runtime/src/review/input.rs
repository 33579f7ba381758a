//! The reviewer's input: the task, the focus, the findings still open, and the history in the
//! chosen mode, within a token budget for the reviewer's model.
//!
//! The full history goes through the same sliding window as an agent step: the global summary,
//! the segment summaries, the pinned messages they cover, and the newest messages verbatim, read
//! from the store only as far back as the budget reaches. Tokens are the store's counts, cached
//! per message, so building the input never tokenizes the history again. Each message is shown
//! in the greppable text format (`### seq=N role=R …`, `@tool_call`, `@reasoning`), so the
//! reviewer can cite seqs.

use std::fmt::Write as _;

use decima_core::export::{ExportFormat, render_message};
use decima_core::prompt::Preset;
use decima_core::{Message, TokenCounter};
use decima_store::{Conversation, Finding, Store};

use super::ReviewMode;
use crate::context::{Loaded, Scale, load_tail};
use crate::error::Result;
use crate::settings::WindowSettings;

/// Tokens a message's text header adds beyond the per-message overhead its count holds.
pub const HEADER_TOKENS: u32 = 20;
/// The share of the history budget the sliding window plans with; the rest absorbs the
/// headers, which the cached counts do not hold.
const WINDOW_SHARE: f64 = 0.8;

/// The input, and what it covers.
#[derive(Debug, Clone)]
pub struct Input {
    /// The user message sent to the reviewer.
    pub text: String,
    /// Its size in store tokens (cached counts plus the counted fixed parts).
    pub tokens: u32,
    /// The first seq it reads from (0: from the start, through summaries).
    pub from_seq: i64,
    /// Messages shown verbatim.
    pub shown: usize,
    /// Live messages that are neither shown nor covered by a summary shown.
    pub left_out: u64,
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
    /// The token budget for the whole input (store tokens).
    pub budget: u32,
}

/// Builds the input.
pub async fn build(store: &Store, parts: &Parts<'_>, counter: &dyn TokenCounter) -> Result<Input> {
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
    let fixed = counter.count_text(&head);
    let room = parts.budget.saturating_sub(fixed);
    let (history, history_tokens, from_seq, shown, left_out) = match (parts.mode, parts.after_seq) {
        (ReviewMode::SpecificContent { content }, _) => {
            let (text, tokens) = content_within(content, room, counter);
            (
                format!("# The content to review\n{text}\n"),
                tokens,
                0,
                0,
                0,
            )
        }
        (ReviewMode::RecentMessages { count }, _) => {
            let messages = store
                .messages()
                .page_before(parts.conversation.id, 0, i64::MAX, *count)
                .await?;
            newest_within(messages, 0, room, &format!("# The last {count} messages"))
        }
        (ReviewMode::FullHistory, Some(after)) => {
            // Read backwards from the newest only as far as the budget reaches; what is older
            // is counted, not loaded.
            let (messages, unread) = load_tail(store, parts.conversation.id, after, room).await?;
            newest_within(
                messages,
                unread.count,
                room,
                &format!(
                    "# New messages since the last review (seq > {after}); earlier ones were reviewed"
                ),
            )
        }
        (ReviewMode::FullHistory, None) => full_history(store, parts.conversation, room).await?,
    };
    let mut text = head;
    text.push_str(&history);
    Ok(Input {
        text,
        tokens: fixed.saturating_add(history_tokens),
        from_seq,
        shown,
        left_out,
    })
}

/// The sliding window over the whole history, rendered with seqs.
async fn full_history(
    store: &Store,
    conversation: &Conversation,
    room: u32,
) -> Result<(String, u32, i64, usize, u64)> {
    let plan = (f64::from(room) * WINDOW_SHARE) as u32;
    let window = WindowSettings {
        output_reserve: 0,
        ..WindowSettings::new(plan)
    };
    let loaded = Loaded::load(
        store,
        conversation,
        &Preset::default(),
        &window,
        Scale::ONE,
        decima_llm::tokens::store_counter().as_ref(),
    )
    .await?;
    let (selection, unread) = loaded.select_within(plan)?;
    let mut text = String::from("# The history\n");
    let mut tokens = 0u32;
    let mut summaries: Vec<_> = selection
        .global
        .into_iter()
        .chain(selection.segments.iter().copied())
        .collect();
    summaries.sort_by_key(|s| s.start_seq);
    if !summaries.is_empty() {
        text.push_str(
            "Older messages are shown as summaries of their seq ranges; the pinned ones among \
             them are shown verbatim after.\n\n",
        );
    }
    for s in &summaries {
        let _ = writeln!(text, "{}\n{}\n", s.header(), s.text.trim_end());
        tokens = tokens.saturating_add(s.tokens);
    }
    let mut verbatim: Vec<&Message> = selection.pinned.clone();
    verbatim.extend(selection.recent.iter());
    let (keep, verbatim_tokens) = fit_newest(&verbatim, room.saturating_sub(tokens));
    tokens = tokens.saturating_add(verbatim_tokens);
    let dropped = verbatim.len() - keep;
    let verbatim = &verbatim[dropped..];
    if !verbatim.is_empty() {
        text.push_str("## Messages\n");
    }
    for m in verbatim {
        render_message(ExportFormat::Text, m, &mut text);
    }
    let left_out = unread.count
        + selection.pending.len() as u64
        + selection.unpaired.len() as u64
        + dropped as u64;
    if left_out > 0 {
        let _ = writeln!(
            text,
            "\n({left_out} older messages are neither summarised nor shown: the budget ran out)"
        );
    }
    Ok((text, tokens, 0, verbatim.len(), left_out))
}

/// How many of the newest of `messages` (in seq order) fit in `room` with their text headers,
/// and the tokens they take.
fn fit_newest<M: std::borrow::Borrow<Message>>(messages: &[M], room: u32) -> (usize, u32) {
    let mut used = 0u32;
    let mut keep = 0;
    for m in messages.iter().rev() {
        let cost = m.borrow().tokens.saturating_add(HEADER_TOKENS);
        if used.saturating_add(cost) > room {
            break;
        }
        used += cost;
        keep += 1;
    }
    (keep, used)
}

/// The newest of `messages` that fit in `room`, in seq order, under a heading; `older` more
/// were not read at all.
fn newest_within(
    mut messages: Vec<Message>,
    older: u64,
    room: u32,
    heading: &str,
) -> (String, u32, i64, usize, u64) {
    messages.sort_by_key(|m| m.seq);
    let (keep, used) = fit_newest(&messages, room);
    let shown = &messages[messages.len() - keep..];
    let mut text = format!("{heading}\n");
    for m in shown {
        render_message(ExportFormat::Text, m, &mut text);
    }
    let left_out = older + (messages.len() - keep) as u64;
    if left_out > 0 {
        let _ = writeln!(
            text,
            "\n({left_out} of these messages are not shown: the budget ran out)"
        );
    }
    if messages.is_empty() {
        text.push_str("(none)\n");
    }
    (
        text,
        used,
        shown.first().map_or(0, |m| m.seq),
        shown.len(),
        left_out,
    )
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
