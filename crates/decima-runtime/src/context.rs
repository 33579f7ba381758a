//! Building one step's request through the context pipeline: the budget, the windowed load from
//! the store, select, assemble and measure.
//!
//! A step loads only what it sends: the live summaries, the pinned units they cover, and the
//! newest uncovered messages, read backwards in pages until the window is full. What lies
//! between the frontier and the loaded tail is measured with one SQL aggregate over the cached
//! token counts, never loaded. So the cost follows the window, not the history.
//!
//! Usage is measured against the room the prompt may use (the window minus the answer's
//! reserve), in the model's tokens (store counts scaled by the calibration). The history budget
//! is that same room minus the fixed layers, so "100% used" is exactly "the history no longer
//! fits", and the 85% and 90% thresholds always come before it, on any window.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use decima_core::context::{
    ContextReport, HistoryBudget, Layer as ReportLayer, Selection, Summary, select,
};
use decima_core::prompt::{AssembleInput, Assembled, Layer, Preset, assemble};
use decima_core::{ConversationId, Message, NewMessage, TokenCounter};
use decima_store::{Conversation, PinnedTodo, SeqTotals, Store};
use tracing::debug;

use crate::error::{Result, RuntimeError};
use crate::memo::MemoCounter;
use crate::settings::WindowSettings;

/// Messages read per page on the first step back from the newest; later pages double, up to
/// [`MAX_PAGE`], so short windows read little and long ones need few round trips.
const FIRST_PAGE: u32 = 64;
/// The largest page.
const MAX_PAGE: u32 = 2_048;

/// The conversation's preset, or the plain one (the history, and summaries as session context).
pub async fn preset_of(store: &Store, conversation: &Conversation) -> Result<Preset> {
    match &conversation.preset_id {
        Some(preset_id) => {
            let record = store.presets().get(preset_id).await?;
            serde_json::from_value(record.body).map_err(|e| {
                RuntimeError::Config(format!(
                    "preset {preset_id} cannot be read as a Decima preset: {e}"
                ))
            })
        }
        None => Ok(Preset::default()),
    }
}

/// How store-counted tokens relate to what the model counts: its calibration factor, learned
/// from reported usage, times the ratio of its tokenizer to the store's. Budgets are divided by
/// it and measurements multiplied, so selection never plans for more than the real window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale(f64);

impl Scale {
    /// Model tokens are store tokens.
    pub const ONE: Scale = Scale(1.0);

    /// A factor, kept within a sane range so a corrupt calibration cannot zero the budget.
    pub fn new(factor: f64) -> Self {
        if factor.is_finite() {
            Scale(factor.clamp(0.25, 4.0))
        } else {
            Scale::ONE
        }
    }

    /// The factor.
    pub fn factor(self) -> f64 {
        self.0
    }

    /// Store tokens → model tokens, rounded up.
    pub fn to_model(self, store_tokens: u64) -> u32 {
        let v = (store_tokens as f64 * self.0).ceil();
        if v >= f64::from(u32::MAX) {
            u32::MAX
        } else {
            v as u32
        }
    }

    /// Model tokens → store tokens, rounded down.
    pub fn to_store(self, model_tokens: u32) -> u32 {
        (f64::from(model_tokens) / self.0).floor() as u32
    }
}

/// The figures the budget was made from, for the meter and for tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budgeting {
    /// The model's window.
    pub window: u32,
    /// Tokens kept for the answer.
    pub output_reserve: u32,
    /// Model tokens the prompt may use: window minus reserve.
    pub input_room: u32,
    /// The same room, in store tokens.
    pub input_room_store: u32,
    /// The preset's fixed text (store tokens).
    pub system_constants: u32,
    /// What the request holds beside the preset and the history: the summaries' headers and
    /// the volatile tail (pinned todos, step history, this request's report).
    pub session_overhead: u32,
    /// What is left for the history (summaries, pinned, recent), in store tokens.
    pub history: HistoryBudget,
    /// The scale in force.
    pub scale: Scale,
}

/// Where the history's tokens went, in store tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HistoryBreakdown {
    /// The global summary.
    pub global_summary: u32,
    /// The segment summaries.
    pub segment_summaries: u32,
    /// Pinned messages a summary covers, sent verbatim.
    pub pinned: u32,
    /// The newest uncovered messages, sent verbatim.
    pub recent: u32,
    /// Uncovered messages that did not fit.
    pub pending: u64,
    /// How many messages did not fit.
    pub pending_messages: u64,
    /// Messages read from the store to build this request: the cost of the step.
    pub loaded_messages: usize,
}

/// The assembled request and its measurements.
#[derive(Debug, Clone)]
pub struct Built {
    /// The request, with layers and tokens (store counts).
    pub assembled: Assembled,
    /// Usage and threshold state, in model tokens, against the input room.
    pub report: ContextReport,
    /// The budget it was made with.
    pub budgeting: Budgeting,
    /// Where the history's tokens went.
    pub history: HistoryBreakdown,
    /// The live summaries (for compression planning), shared with what the step read.
    pub summaries: Arc<[Summary]>,
    /// The pinned units the summaries cover, shared likewise.
    pub pinned: Arc<[Message]>,
    /// The last seq the summaries cover.
    pub frontier: i64,
}

impl Built {
    /// True when some uncovered message could not be placed: compression must run first.
    pub fn compression_required(&self) -> bool {
        self.history.pending_messages > 0
    }
}

/// The pinned todos verbatim, then the summaries, global first, as one text: what a step sent
/// before the todos moved to the volatile tail (the step benchmark's full-reload baseline
/// renders it).
pub fn render_session_context(todos: &[PinnedTodo], summaries: &[Summary]) -> String {
    join_session(&[&render_todos(todos), &render_summaries(summaries)])
}

/// The pinned todos, one line each, under a heading; empty without any.
fn render_todos(todos: &[PinnedTodo]) -> String {
    let mut out = String::new();
    if !todos.is_empty() {
        out.push_str("Pinned todos:\n");
        for t in todos {
            let _ = match &t.phase {
                Some(phase) => writeln!(out, "- [{}] {} (phase: {phase})", t.status, t.title),
                None => writeln!(out, "- [{}] {}", t.status, t.title),
            };
        }
    }
    out
}

/// What the summaries cost a request beyond their own tokens (which the history's selection
/// counts): the session message's frame and the summaries' headers. A compression's preview
/// adds it, as the request will, so that it says what the meter will read.
pub fn summaries_overhead(summaries: &[Summary], counter: &dyn TokenCounter) -> u32 {
    let session = render_summaries(summaries);
    if session.is_empty() {
        return 0;
    }
    let frame = counter.count_message(&NewMessage::new(decima_core::Role::System, ""));
    let own: u64 = summaries.iter().map(|s| u64::from(s.tokens)).sum();
    u32::try_from(
        u64::from(frame)
            .saturating_add(u64::from(counter.count_text(&session)))
            .saturating_sub(own),
    )
    .unwrap_or(u32::MAX)
}

/// The summaries, global first, each under its header.
fn render_summaries(summaries: &[Summary]) -> String {
    let mut ordered: Vec<&Summary> = summaries.iter().collect();
    ordered.sort_by_key(|s| {
        (
            s.level != decima_core::context::SummaryLevel::Global,
            s.start_seq,
        )
    });
    let mut out = String::new();
    for s in ordered {
        let _ = writeln!(out, "{}\n{}\n", s.header(), s.text.trim_end());
    }
    out.trim_end().to_owned()
}

/// The session context's parts, the empty ones left out, a blank line between the others.
fn join_session(parts: &[&str]) -> String {
    let mut session = String::new();
    for part in parts.iter().map(|p| p.trim_end()).filter(|p| !p.is_empty()) {
        if !session.is_empty() {
            session.push_str("\n\n");
        }
        session.push_str(part);
    }
    session
}

/// The fixed text of a preset: what it sends with an empty history.
fn system_constants(preset: &Preset, counter: &dyn TokenCounter) -> u32 {
    let placeholders = BTreeMap::new();
    let mut probe = AssembleInput::new(&[]);
    probe.placeholders = &placeholders;
    assemble(preset, &probe, counter).tokens.system_constants
}

/// The last seq the summaries cover (0 with none).
pub fn frontier_of(summaries: &[Summary]) -> i64 {
    summaries.iter().map(|s| s.end_seq).max().unwrap_or(0)
}

fn sum_tokens<'a>(messages: impl IntoIterator<Item = &'a Message>) -> u64 {
    messages.into_iter().map(|m| u64::from(m.tokens)).sum()
}

/// Reads the newest uncovered messages backwards, page by page, until they hold more than
/// `room` tokens or the frontier is reached. Returns them in seq order with the totals of the
/// uncovered messages left unread.
pub(crate) async fn load_tail(
    store: &Store,
    id: ConversationId,
    frontier: i64,
    room: u32,
) -> Result<(Vec<Message>, SeqTotals)> {
    load_tail_before(store, id, frontier, i64::MAX, room).await
}

/// [`load_tail`] of the messages with `frontier < seq < before`: the newest of them, read
/// backwards until they hold more than `room` tokens, and the totals of the older ones left
/// unread.
pub(crate) async fn load_tail_before(
    store: &Store,
    id: ConversationId,
    frontier: i64,
    before: i64,
    room: u32,
) -> Result<(Vec<Message>, SeqTotals)> {
    let mut pages: Vec<Vec<Message>> = Vec::new();
    let mut before = before;
    let mut tokens = 0u64;
    let mut size = FIRST_PAGE;
    loop {
        let page = store
            .messages()
            .page_before(id, frontier, before, size)
            .await?;
        let exhausted = page.len() < size as usize;
        if let Some(first) = page.first() {
            before = first.seq;
        }
        tokens += sum_tokens(&page);
        pages.push(page);
        if exhausted {
            return Ok((
                pages.into_iter().rev().flatten().collect(),
                SeqTotals::default(),
            ));
        }
        if tokens > u64::from(room) {
            break;
        }
        size = (size * 2).min(MAX_PAGE);
    }
    let unread = store
        .messages()
        .totals_between(id, frontier, before)
        .await?;
    Ok((pages.into_iter().rev().flatten().collect(), unread))
}

/// Selects, assembles and measures the request for the conversation as it is stored now.
/// `scale` converts store tokens to the model's (see [`Scale`]).
pub async fn build(
    store: &Store,
    conversation: &Conversation,
    preset: &Preset,
    window: &WindowSettings,
    scale: Scale,
) -> Result<Built> {
    build_with(
        store,
        conversation,
        preset,
        window,
        scale,
        Extras::default(),
    )
    .await
}

/// What an agent step adds to the stored conversation: its step history and the instant context
/// of this one request (a failure report to replan from). Both change at every step, so both go
/// in the volatile tail, after the history, where they cost no provider's prompt cache anything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extras<'a> {
    /// The step history, after the pinned todos in the tail.
    pub session: &'a str,
    /// The instant context: sent with this request only, last.
    pub instant: &'a str,
}

/// [`build`] with an agent step's [`Extras`].
pub async fn build_with(
    store: &Store,
    conversation: &Conversation,
    preset: &Preset,
    window: &WindowSettings,
    scale: Scale,
    extras: Extras<'_>,
) -> Result<Built> {
    let memo =
        MemoCounter::load(store, conversation.id, decima_llm::tokens::store_counter()).await?;
    let loaded = Loaded::load(store, conversation, preset, window, scale, &memo).await?;
    let built = loaded.assemble(preset, window, scale, extras, &memo)?;
    if memo.misses() > 0 {
        memo.save(store, conversation.id).await?;
    }
    Ok(built)
}

/// What a step reads from the store to build its request: the live summaries, the pinned
/// units they cover, and the newest uncovered messages. An agent loop keeps it between steps
/// and [`Loaded::refresh`]es it with the messages stored since, so a step does not read the
/// window again; anything it cannot account for (a compaction, a deletion) makes it reload.
#[derive(Debug, Clone)]
pub struct Loaded {
    id: ConversationId,
    summaries: Arc<[Summary]>,
    frontier: i64,
    pinned: Arc<[Message]>,
    tail: Vec<Message>,
    /// `pinned` and `tail` as request drafts, made by the first request assembled from them
    /// and shared by every later one, so a step copies no message it sent before. (A reader
    /// that only selects, the tenth man, never makes them.)
    pinned_drafts: OnceLock<Vec<Arc<NewMessage>>>,
    tail_drafts: OnceLock<Vec<Arc<NewMessage>>>,
    /// The summaries as the session context shows them, and their count: made by the first
    /// request that needs them. Summaries only change with a compaction, which reloads.
    summaries_text: OnceLock<String>,
    summaries_count: OnceLock<u32>,
    /// The pinned todos, shown in the session context; read again with every refresh.
    todos: Vec<PinnedTodo>,
    tail_tokens: u64,
    /// Uncovered messages older than the tail, not loaded.
    unread: SeqTotals,
    /// The newest seq read.
    last_seq: i64,
    /// The conversation's live message count and tokens when the tail was last brought up to
    /// date: a refresh that does not add up to the stored counters reloads.
    live: (u64, u64),
    /// How many tokens of tail a request can hold at most (the history room).
    tail_room: u64,
}

impl Loaded {
    /// Reads what the next request needs from the store.
    pub async fn load(
        store: &Store,
        conversation: &Conversation,
        preset: &Preset,
        window: &WindowSettings,
        scale: Scale,
        counter: &dyn TokenCounter,
    ) -> Result<Self> {
        let id = conversation.id;
        let input_room_store = scale.to_store(
            window
                .window
                .saturating_sub(window.output_reserve.min(window.window)),
        );
        let fixed = system_constants(preset, counter);
        let summaries = store.compactions().live_summaries(id).await?;
        let frontier = frontier_of(&summaries);
        let summary_tokens: u64 = summaries.iter().map(|s| u64::from(s.tokens)).sum();
        let pinned = store.messages().pinned_units_through(id, frontier).await?;
        let covered_pinned = sum_tokens(pinned.iter().filter(|m| m.seq <= frontier));
        let tail_room = u64::from(input_room_store.saturating_sub(fixed))
            .saturating_sub(summary_tokens)
            .saturating_sub(covered_pinned);
        // Read before the tail: a message stored in between is in the tail but not in these
        // counters, so the next refresh finds them disagreeing and reloads; the counters never
        // vouch for a tail that lacks a message. The same query a refresh makes also brings the
        // pinned todos.
        let now = store.compactions().live_state(id).await?;
        let (tail, unread) = load_tail(
            store,
            id,
            frontier,
            u32::try_from(tail_room).unwrap_or(u32::MAX),
        )
        .await?;
        let last_seq = tail.last().map_or(frontier, |m| m.seq);
        Ok(Self {
            id,
            summaries_text: OnceLock::new(),
            tail_tokens: sum_tokens(&tail),
            summaries: summaries.into(),
            frontier,
            pinned_drafts: OnceLock::new(),
            tail_drafts: OnceLock::new(),
            summaries_count: OnceLock::new(),
            todos: now.pinned_todos,
            pinned: pinned.into(),
            tail,
            unread,
            last_seq,
            live: (now.messages, now.tokens),
            tail_room,
        })
    }

    /// Brings the tail up to date with what was stored since it was read. `own` are the
    /// messages the caller stored since, as the store returned them: when they are exactly
    /// what was stored (every seq since the tail, and nothing else), they are taken as they
    /// are, without reading them back. Returns `false` when the store changed in a way it
    /// cannot follow (a compaction, a deletion, a rollback): the caller loads afresh.
    pub async fn refresh(&mut self, store: &Store, own: Vec<Message>) -> Result<bool> {
        // The state first, then the new messages: a message stored in between is fetched but
        // not counted, so the counts disagree and the step reloads rather than trusting them.
        let now = store.compactions().live_state(self.id).await?;
        if !now
            .summary_ids
            .iter()
            .eq(self.summaries.iter().map(|s| &s.id))
        {
            return Ok(false);
        }
        // Seqs are gapless: when the caller's messages hold every seq after the tail up to the
        // next, nobody else stored one in between.
        let all_own = own.len() as i64 == now.next_seq - (self.last_seq + 1)
            && own
                .iter()
                .zip(self.last_seq + 1..)
                .all(|(m, seq)| m.seq == seq && m.deleted_at.is_none());
        let fresh = if all_own {
            own
        } else {
            store
                .messages()
                .range(self.id, self.last_seq + 1, i64::MAX)
                .await?
        };
        let added = (fresh.len() as u64, sum_tokens(&fresh));
        if (now.messages, now.tokens) != (self.live.0 + added.0, self.live.1 + added.1) {
            return Ok(false);
        }
        self.live = (now.messages, now.tokens);
        self.todos = now.pinned_todos;
        if let Some(last) = fresh.last() {
            self.last_seq = last.seq;
        }
        self.tail_tokens += added.1;
        if let Some(drafts) = self.tail_drafts.get_mut() {
            drafts.extend(drafts_of(&fresh));
        }
        self.tail.extend(fresh);
        // Messages that can no longer fit whatever the budget move to the unread totals, as a
        // load would have left them unread, so memory follows the window too.
        let mut drop = 0;
        while drop < self.tail.len()
            && self.tail_tokens - u64::from(self.tail[drop].tokens) > self.tail_room
        {
            self.tail_tokens -= u64::from(self.tail[drop].tokens);
            self.unread.count += 1;
            self.unread.tokens += u64::from(self.tail[drop].tokens);
            drop += 1;
        }
        self.tail.drain(..drop);
        if let Some(drafts) = self.tail_drafts.get_mut() {
            drafts.drain(..drop);
        }
        Ok(true)
    }

    /// The drafts of what `selection` sends, in order (the pinned, then the recent), shared
    /// with the ones made when the messages were read.
    fn drafts(&self, selection: &Selection<'_>) -> (Vec<Arc<NewMessage>>, Vec<u32>) {
        let mut drafts = Vec::with_capacity(selection.pinned.len() + selection.recent.len());
        let mut tokens = Vec::with_capacity(drafts.capacity());
        let pinned = selection.pinned.iter().copied();
        let pinned_drafts = self.pinned_drafts.get_or_init(|| drafts_of(&self.pinned));
        let tail_drafts = self.tail_drafts.get_or_init(|| drafts_of(&self.tail));
        for (m, draft) in shared_drafts(&self.pinned, pinned_drafts, pinned).chain(shared_drafts(
            &self.tail,
            tail_drafts,
            selection.recent.iter(),
        )) {
            drafts.push(draft);
            tokens.push(m.tokens);
        }
        (drafts, tokens)
    }

    /// The oldest seq a request can hold verbatim: past the summaries and in the loaded tail.
    pub fn first_verbatim_seq(&self) -> i64 {
        (self.frontier + 1).max(self.tail.first().map_or(i64::MAX, |m| m.seq))
    }

    /// The sliding-window selection over what was read, within `tokens` of history (store
    /// tokens), for a reader that renders it itself: the tenth man's input. Also returns the
    /// uncovered messages older than the loaded tail, which no selection can show.
    pub fn select_within(&self, tokens: u32) -> Result<(Selection<'_>, SeqTotals)> {
        let selection = select(
            &self.tail,
            &self.pinned,
            &self.summaries,
            &HistoryBudget::new(tokens),
        )?;
        Ok((selection, self.unread))
    }

    /// What the selected history holds, by layer, with what is pending (unread included).
    fn breakdown(&self, selection: &Selection) -> HistoryBreakdown {
        HistoryBreakdown {
            global_summary: selection.global_tokens,
            segment_summaries: selection.segment_tokens,
            pinned: selection.pinned_tokens,
            recent: selection.recent_tokens,
            pending: u64::from(selection.pending_tokens) + self.unread.tokens,
            pending_messages: selection.pending.len() as u64 + self.unread.count,
            loaded_messages: self.tail.len() + self.pinned.len(),
        }
    }

    /// Selects, assembles and measures the request from what was read.
    pub fn assemble(
        &self,
        preset: &Preset,
        window: &WindowSettings,
        scale: Scale,
        extras: Extras<'_>,
        counter: &dyn TokenCounter,
    ) -> Result<Built> {
        let output_reserve = window.output_reserve.min(window.window);
        let input_room = window.window.saturating_sub(output_reserve);
        let input_room_store = scale.to_store(input_room);
        let fixed = system_constants(preset, counter);
        // The session context is the summaries alone: they change only with a compaction, so a
        // request repeats the one before it up to the history's end. Everything that changes at
        // every step (the pinned todos, the step history, this request's report) is the
        // volatile tail, sent last. Each is counted in parts: the summaries once per load, the
        // tail each time. A part's count may differ from the whole's by a token where they
        // meet; the calibration absorbs that, as it does for the paragraph counts.
        let todos_text = render_todos(&self.todos);
        let session = self
            .summaries_text
            .get_or_init(|| render_summaries(&self.summaries))
            .as_str();
        let tail = join_session(&[&todos_text, extras.session, extras.instant]);
        let session_text_tokens = if session.is_empty() {
            0
        } else {
            *self
                .summaries_count
                .get_or_init(|| counter.count_text(session))
        };
        let system_frame = counter.count_message(&NewMessage::new(decima_core::Role::System, ""));
        let session_tokens =
            (!session.is_empty()).then(|| system_frame.saturating_add(session_text_tokens));
        let tail_tokens = if tail.is_empty() {
            0
        } else {
            system_frame.saturating_add(counter.count_text(&tail))
        };
        let summary_tokens: u64 = self.summaries.iter().map(|s| u64::from(s.tokens)).sum();
        let session_overhead = u32::try_from(
            u64::from(session_text_tokens)
                .saturating_sub(summary_tokens)
                .saturating_add(u64::from(tail_tokens)),
        )
        .unwrap_or(u32::MAX);
        let mut history = HistoryBudget::new(
            input_room_store
                .saturating_sub(fixed)
                .saturating_sub(session_overhead),
        );
        // Two passes at most: the assembled request can hold more than the budget foresaw
        // (lorebook entries that keywords in the history activate); the second pass gives their
        // tokens back by shrinking the history budget.
        let mut pass = 0;
        let (assembled, breakdown) = loop {
            let selection = select(&self.tail, &self.pinned, &self.summaries, &history)?;
            let drafts = self.drafts(&selection);
            let assembled =
                assemble_selection(preset, &drafts, (session, session_tokens), &tail, counter);
            let excess = assembled.total.saturating_sub(input_room_store);
            if excess > 0 && pass == 0 {
                pass += 1;
                history.tokens = history.tokens.saturating_sub(excess);
                continue;
            }
            break (assembled, self.breakdown(&selection));
        };
        let report = measure(&assembled, &breakdown, input_room, scale, window);
        debug!(
            conversation = %self.id,
            loaded = breakdown.loaded_messages,
            pending = breakdown.pending_messages,
            usage = report.usage,
            "built the request"
        );
        Ok(Built {
            assembled,
            report,
            budgeting: Budgeting {
                window: window.window,
                output_reserve,
                input_room,
                input_room_store,
                system_constants: fixed,
                session_overhead,
                history,
                scale,
            },
            history: breakdown,
            summaries: Arc::clone(&self.summaries),
            pinned: Arc::clone(&self.pinned),
            frontier: self.frontier,
        })
    }
}

/// The report: every layer in model tokens, plus what is pending, against the input room.
fn measure(
    assembled: &Assembled,
    history: &HistoryBreakdown,
    input_room: u32,
    scale: Scale,
    window: &WindowSettings,
) -> ContextReport {
    // A system message from the history is shown with the system layer, where a person looks
    // for the system prompt; the budgets keep counting it with the history.
    let moved = u64::from(assembled.history_system);
    let mut layers: Vec<ReportLayer> = Layer::ALL
        .iter()
        .map(|l| {
            let raw = u64::from(*assembled.tokens.get(*l));
            let raw = match l {
                Layer::SystemConstants => raw.saturating_add(moved),
                Layer::WorkingContext => raw.saturating_sub(moved),
                _ => raw,
            };
            ReportLayer::new(l.name(), scale.to_model(raw))
        })
        .collect();
    layers.push(ReportLayer::new("pending", scale.to_model(history.pending)));
    ContextReport::new(layers, input_room, &window.thresholds)
}

/// The drafts made for `picked`, a seq-ordered selection out of `read` (whose drafts are
/// `drafts`): one forward walk, as both are in seq order. A message not found (which a
/// selection over `read` cannot hold) gets a draft of its own.
fn shared_drafts<'m>(
    read: &'m [Message],
    drafts: &'m [Arc<NewMessage>],
    picked: impl Iterator<Item = &'m Message> + 'm,
) -> impl Iterator<Item = (&'m Message, Arc<NewMessage>)> + 'm {
    let mut at = 0;
    picked.map(move |m| {
        if read.get(at).is_none_or(|r| r.seq != m.seq) {
            at = read.partition_point(|r| r.seq < m.seq);
        }
        let draft = match (read.get(at), drafts.get(at)) {
            (Some(r), Some(draft)) if r.seq == m.seq => Arc::clone(draft),
            _ => Arc::new(NewMessage::from(m)),
        };
        at += 1;
        (m, draft)
    })
}

/// The drafts of stored messages, for requests.
fn drafts_of(messages: &[Message]) -> Vec<Arc<NewMessage>> {
    messages
        .iter()
        .map(|m| Arc::new(NewMessage::from(m)))
        .collect()
}

fn assemble_selection(
    preset: &Preset,
    (working, tokens): &(Vec<Arc<NewMessage>>, Vec<u32>),
    (session, session_tokens): (&str, Option<u32>),
    instant: &str,
    counter: &dyn TokenCounter,
) -> Assembled {
    let placeholders = BTreeMap::new();
    let mut input = AssembleInput::new(working);
    input.history_tokens = Some(tokens);
    input.session_context = session;
    input.session_context_tokens = session_tokens;
    input.instant_context = instant;
    input.placeholders = &placeholders;
    assemble(preset, &input, counter)
}
