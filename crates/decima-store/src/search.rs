//! Full-text search over messages: the sidebar's search across conversations and find in one
//! conversation, both through the `messages_fts` index (see its migration), newest hit first.

use decima_core::{ConversationId, Role, Timestamp};
use regex::{Regex, RegexBuilder};
use sqlx::{Postgres, QueryBuilder, Sqlite};

use crate::rows::corrupt;
use crate::{Result, Store, StoreError};

/// The trigram index cannot match fewer characters than this; shorter terms are a scan.
const TRIGRAM: usize = 3;
/// How much of a message the index holds (characters), and so how much a hit is checked in.
const INDEXED_CHARS: i64 = 262_144;
/// The longest query taken: a search box, not a document.
pub const MAX_QUERY_CHARS: usize = 500;
/// The most hits one page holds.
pub const MAX_PAGE: u32 = 200;
/// Characters of context a snippet keeps before the match, and in all.
const SNIPPET_BEFORE: usize = 60;
const SNIPPET_CHARS: usize = 220;

/// What to search for, and where.
#[derive(Debug, Clone)]
pub struct SearchQuery<'a> {
    /// The analyst's words: each must occur in the message (as a substring, any case).
    pub text: &'a str,
    /// Only this conversation's messages (find in a conversation).
    pub conversation: Option<ConversationId>,
    /// The cursor of the previous page's last hit: the next page starts below it.
    pub before: Option<i64>,
    /// Hits per page (at most [`MAX_PAGE`]).
    pub limit: u32,
}

/// One message that holds every term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    /// Where this hit stands in the index: pass it back as `before` for the next page.
    pub cursor: i64,
    /// The conversation the message belongs to.
    pub conversation_id: ConversationId,
    /// Its title, so a hit can be listed without another read.
    pub conversation_title: String,
    /// The message's seq: where the conversation opens.
    pub seq: i64,
    /// Who wrote it.
    pub role: Role,
    /// When it was stored.
    pub created_at: Timestamp,
    /// The text around the first match.
    pub snippet: Snippet,
}

/// A line of text around a match, split so the window can mark the match without HTML.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snippet {
    /// Text before the match (starts with "…" when cut).
    pub before: String,
    /// The matching text as the message spells it.
    pub matched: String,
    /// Text after the match (ends with "…" when cut).
    pub after: String,
}

/// A page of hits, newest first.
#[derive(Debug, Clone, Default)]
pub struct SearchPage {
    /// The hits.
    pub hits: Vec<SearchHit>,
    /// The cursor for the next page, when there may be one.
    pub next: Option<i64>,
}

/// The seqs of a conversation's messages that match, for find in a conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeqMatches {
    /// Matching seqs in ascending order, at most the limit asked for.
    pub seqs: Vec<i64>,
    /// True when more messages matched than were returned.
    pub truncated: bool,
}

/// The analyst's words, split into what the index can find and what needs a scan.
struct Terms {
    /// Every term, as typed (for checking and snippets).
    all: Vec<String>,
    /// An FTS5 query of the terms of three characters or more, each a quoted substring.
    indexed: Option<String>,
    /// `LIKE` patterns for the shorter terms.
    scanned: Vec<String>,
    /// Case-insensitive matchers for every term.
    matchers: Vec<Regex>,
}

impl Terms {
    /// A page of hits from the rows read (one more than `limit`, to know whether more follow),
    /// each checked against the terms: an index out of step with the text never shows a
    /// message that does not match.
    fn page(&self, mut rows: Vec<HitRow>, limit: u32) -> Result<SearchPage> {
        let terms = self;
        let next = (rows.len() > limit as usize).then(|| {
            rows.truncate(limit as usize);
            rows.last().map(|r| r.cursor)
        });
        let mut hits = Vec::with_capacity(rows.len());
        for row in rows {
            let tool_calls = row.tool_calls.as_deref().unwrap_or("");
            if !terms.all_in(&row.content, tool_calls) {
                tracing::warn!(
                    cursor = row.cursor,
                    "the search index holds a message that does not match; skipped"
                );
                continue;
            }
            hits.push(SearchHit {
                cursor: row.cursor,
                conversation_id: row
                    .conversation_id
                    .parse()
                    .map_err(|e| corrupt("conversation id", e))?,
                conversation_title: row.title,
                seq: row.seq,
                role: row.role.parse().map_err(|e| corrupt("role", e))?,
                created_at: Timestamp(row.created_at),
                snippet: terms.snippet(&row.content, tool_calls),
            });
        }
        tracing::debug!(terms = terms.all.len(), hits = hits.len(), "searched");
        Ok(SearchPage {
            hits,
            next: next.flatten(),
        })
    }

    fn parse(text: &str) -> Result<Option<Self>> {
        if text.chars().count() > MAX_QUERY_CHARS {
            return Err(StoreError::InvalidInput(format!(
                "a search is at most {MAX_QUERY_CHARS} characters"
            )));
        }
        let all: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
        if all.is_empty() {
            return Ok(None);
        }
        let phrases: Vec<String> = all
            .iter()
            .filter(|t| t.chars().count() >= TRIGRAM)
            .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
            .collect();
        let scanned = all
            .iter()
            .filter(|t| t.chars().count() < TRIGRAM)
            .map(|t| format!("%{}%", like_escaped(t)))
            .collect();
        let matchers = all
            .iter()
            .map(|t| {
                RegexBuilder::new(&regex::escape(t))
                    .case_insensitive(true)
                    .build()
                    .map_err(|e| StoreError::InvalidInput(format!("cannot search for {t:?}: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(Self {
            all,
            indexed: (!phrases.is_empty()).then(|| phrases.join(" AND ")),
            scanned,
            matchers,
        }))
    }

    /// Whether `text` holds every term: the index's hits are checked, so an index that fell
    /// out of step (a VACUUM from outside renumbering rowids) shows nothing false.
    fn all_in(&self, content: &str, tool_calls: &str) -> bool {
        self.matchers
            .iter()
            .all(|m| m.is_match(content) || m.is_match(tool_calls))
    }

    /// The text around the earliest match in the content, else in the tool calls.
    fn snippet(&self, content: &str, tool_calls: &str) -> Snippet {
        let earliest = |text: &str| {
            self.matchers
                .iter()
                .filter_map(|m| m.find(text))
                .min_by_key(|m| m.start())
                .map(|m| (m.start(), m.end()))
        };
        match earliest(content) {
            Some((start, end)) => snippet_at(content, start, end),
            None => match earliest(tool_calls) {
                Some((start, end)) => snippet_at(tool_calls, start, end),
                None => snippet_at(content, 0, 0),
            },
        }
    }
}

/// `term` with LIKE's wildcards and the escape character escaped (`ESCAPE '\'`).
fn like_escaped(term: &str) -> String {
    let mut out = String::with_capacity(term.len());
    for c in term.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A one-line excerpt of `text` around the byte range `start..end`.
fn snippet_at(text: &str, start: usize, end: usize) -> Snippet {
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let head = &text[..start];
    let before_start = head
        .char_indices()
        .rev()
        .nth(SNIPPET_BEFORE - 1)
        .map_or(0, |(i, _)| i);
    let mut before = flat(&head[before_start..]);
    if head.ends_with(char::is_whitespace) && !before.is_empty() {
        before.push(' ');
    }
    if before_start > 0 {
        before.insert(0, '…');
    }
    let matched = text[start..end].to_owned();
    let room = SNIPPET_CHARS.saturating_sub(before.chars().count() + matched.chars().count());
    let tail = &text[end..];
    let tail_end = tail.char_indices().nth(room).map_or(tail.len(), |(i, _)| i);
    let mut after = flat(&tail[..tail_end]);
    if tail.starts_with(char::is_whitespace) && !after.is_empty() {
        after.insert(0, ' ');
    }
    if tail_end < tail.len() {
        after.push('…');
    }
    Snippet {
        before,
        matched,
        after,
    }
}

/// A matching row as read, before it is checked.
#[derive(sqlx::FromRow)]
struct HitRow {
    cursor: i64,
    conversation_id: String,
    title: String,
    seq: i64,
    role: String,
    created_at: i64,
    content: String,
    tool_calls: Option<String>,
}

/// Full-text search over the store's messages.
pub struct Search<'a> {
    store: &'a Store,
}

impl<'a> Search<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        Self { store }
    }

    /// A page of live messages (in live conversations) that hold every term, newest first.
    /// An empty query finds nothing.
    #[tracing::instrument(skip_all, fields(scoped = query.conversation.is_some()))]
    pub async fn messages(&self, query: &SearchQuery<'_>) -> Result<SearchPage> {
        let Some(terms) = Terms::parse(query.text)? else {
            return Ok(SearchPage::default());
        };
        let limit = query.limit.clamp(1, MAX_PAGE);
        let pool = match self.store.backend() {
            crate::Backend::Sqlite(pool) => pool,
            crate::Backend::Postgres(pool) => {
                let mut sql = QueryBuilder::<Postgres>::new(
                    "SELECT m.row_id AS cursor, m.conversation_id, c.title, m.seq, m.role, \
                     m.created_at, left(m.content, ",
                );
                sql.push(INDEXED_CHARS.to_string());
                sql.push(") AS content, m.tool_calls ");
                push_matching_postgres(&mut sql, &terms, query.conversation, query.before);
                sql.push(" ORDER BY m.row_id DESC LIMIT ");
                sql.push_bind(i64::from(limit) + 1);
                let rows: Vec<HitRow> = Box::pin(sql.build_query_as().fetch_all(pool)).await?;
                return terms.page(rows, limit);
            }
        };
        let mut sql = QueryBuilder::<Sqlite>::new(
            "SELECT m.rowid AS cursor, m.conversation_id, c.title, m.seq, m.role, m.created_at, \
             substr(m.content, 1, ",
        );
        sql.push(INDEXED_CHARS.to_string());
        sql.push(") AS content, m.tool_calls ");
        let key = push_matching(&mut sql, &terms, query.conversation, query.before);
        sql.push(format!(" ORDER BY {key} DESC LIMIT "));
        sql.push_bind(i64::from(limit) + 1);
        let rows: Vec<HitRow> = sql.build_query_as().fetch_all(pool).await?;
        terms.page(rows, limit)
    }

    /// The seqs of one conversation's live messages that hold every term, oldest first, at
    /// most `limit`: find in a conversation steps through them.
    #[tracing::instrument(skip_all)]
    pub async fn seqs_in(
        &self,
        conversation: ConversationId,
        text: &str,
        limit: u32,
    ) -> Result<SeqMatches> {
        let Some(terms) = Terms::parse(text)? else {
            return Ok(SeqMatches::default());
        };
        let mut seqs: Vec<i64> = match self.store.backend() {
            crate::Backend::Sqlite(pool) => {
                let mut sql = QueryBuilder::<Sqlite>::new("SELECT m.seq ");
                let _ = push_matching(&mut sql, &terms, Some(conversation), None);
                sql.push(" ORDER BY m.seq LIMIT ");
                sql.push_bind(i64::from(limit) + 1);
                sql.build_query_scalar().fetch_all(pool).await?
            }
            crate::Backend::Postgres(pool) => {
                let mut sql = QueryBuilder::<Postgres>::new("SELECT m.seq ");
                push_matching_postgres(&mut sql, &terms, Some(conversation), None);
                sql.push(" ORDER BY m.seq LIMIT ");
                sql.push_bind(i64::from(limit) + 1);
                Box::pin(sql.build_query_scalar().fetch_all(pool)).await?
            }
        };
        let truncated = seqs.len() > limit as usize;
        seqs.truncate(limit as usize);
        Ok(SeqMatches { seqs, truncated })
    }
}

/// `FROM … WHERE …` for the live messages that hold every term: through the index when a term
/// is long enough, else a scan from the newest row. Returns the rowid column to order by: the
/// index's own, when it drives, so FTS5 hands rows over newest first and a page stops early
/// instead of sorting every match (a common word matches most of the history).
fn push_matching(
    sql: &mut QueryBuilder<Sqlite>,
    terms: &Terms,
    conversation: Option<ConversationId>,
    before: Option<i64>,
) -> &'static str {
    let key = if terms.indexed.is_some() {
        "messages_fts.rowid"
    } else {
        "m.rowid"
    };
    match &terms.indexed {
        Some(fts) => {
            sql.push(
                "FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid \
                 JOIN conversations c ON c.id = m.conversation_id \
                 WHERE messages_fts MATCH ",
            );
            sql.push_bind(fts.clone());
        }
        None => {
            sql.push(
                "FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE 1 = 1",
            );
        }
    }
    sql.push(" AND m.deleted_at IS NULL AND c.deleted_at IS NULL");
    if let Some(id) = conversation {
        sql.push(" AND m.conversation_id = ");
        sql.push_bind(id.to_string());
    }
    if let Some(cursor) = before {
        sql.push(format!(" AND {key} < "));
        sql.push_bind(cursor);
    }
    for pattern in &terms.scanned {
        sql.push(" AND (m.content LIKE ");
        sql.push_bind(pattern.clone());
        sql.push(" ESCAPE '\\' OR coalesce(m.tool_calls, '') LIKE ");
        sql.push_bind(pattern.clone());
        sql.push(" ESCAPE '\\')");
    }
    key
}

/// `FROM … WHERE …` for the live messages that hold every term, on PostgreSQL: each term is an
/// `ILIKE` over the same text the GIN trigram index `messages_search` holds (the expression must
/// be the index's own for the planner to use it). Terms of three characters or more are found
/// through the index; shorter ones filter what it found, or scan.
fn push_matching_postgres(
    sql: &mut QueryBuilder<Postgres>,
    terms: &Terms,
    conversation: Option<ConversationId>,
    before: Option<i64>,
) {
    sql.push(
        "FROM messages m JOIN conversations c ON c.id = m.conversation_id \
         WHERE m.deleted_at IS NULL AND c.deleted_at IS NULL",
    );
    if let Some(id) = conversation {
        sql.push(" AND m.conversation_id = ");
        sql.push_bind(id.to_string());
    }
    if let Some(cursor) = before {
        sql.push(" AND m.row_id < ");
        sql.push_bind(cursor);
    }
    for term in &terms.all {
        sql.push(format!(
            " AND (left(m.content, {INDEXED_CHARS}) || chr(10) || coalesce(m.tool_calls, '')) \
             ILIKE "
        ));
        sql.push_bind(format!("%{}%", like_escaped(term)));
        sql.push(" ESCAPE '\\'");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_keep_the_match_and_mark_cuts() {
        let text = format!(
            "{} the churn rate was 4.2% {}",
            "a ".repeat(100),
            "b ".repeat(200)
        );
        let start = text.find("churn").unwrap();
        let s = snippet_at(&text, start, start + 5);
        assert_eq!(s.matched, "churn");
        assert!(
            s.before.starts_with('…') && s.before.ends_with("the "),
            "{s:?}"
        );
        assert!(
            s.after.starts_with(" rate was 4.2%") && s.after.ends_with('…'),
            "{s:?}"
        );
        assert!(s.before.chars().count() + s.after.chars().count() <= SNIPPET_CHARS + 4);
    }

    #[test]
    fn snippets_cut_on_character_boundaries() {
        let text = "数据".repeat(100) + "延迟上升" + &"分析".repeat(200);
        let start = text.find("延迟").unwrap();
        let s = snippet_at(&text, start, start + "延迟".len());
        assert_eq!(s.matched, "延迟");
        assert!(s.before.ends_with("数据"));
        assert!(s.after.starts_with("上升分析"));
    }

    #[test]
    fn terms_split_into_indexed_and_scanned() {
        let t = Terms::parse("  churn 4% \"q3\"  ").unwrap().unwrap();
        assert_eq!(t.all, vec!["churn", "4%", "\"q3\""]);
        assert_eq!(t.indexed.as_deref(), Some("\"churn\" AND \"\"\"q3\"\"\""));
        assert_eq!(t.scanned, vec!["%4\\%%"]);
        assert!(Terms::parse("   ").unwrap().is_none());
        assert!(Terms::parse(&"x".repeat(MAX_QUERY_CHARS + 1)).is_err());
    }
}
