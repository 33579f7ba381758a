-- A full-history review covers every live message of the conversation. A full review of a
-- history far above the reviewer's budget reads it in passes and stores one merged review;
-- `passes` lists them as a JSON array: each pass's seq range, the range summarised for it, its
-- input tokens and the risk it found. A review made in one request lists that one request;
-- reviews made before this migration list none.
ALTER TABLE reviews ADD COLUMN passes TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(passes));

-- Summaries the tenth man makes for a review with the extract strategy (no model), cached so
-- that the next review, in any process, reuses them instead of reading the messages again.
-- They are never a compaction: no agent step reads them and the compaction list does not show
-- them. A row summarises the live messages from_seq..=through_seq and is used only while they
-- still have the count, tokens and seq sum recorded with it (a rollback soft-deletes messages,
-- which changes them; it also deletes the rows it touches). `budget` 0 is the whole digest of
-- one block of seqs, as text that parses back, to be merged with its neighbours; a budget above
-- 0 is a whole range rendered within that many tokens, ready to send. `version` names the
-- digest's format: rows of another version are ignored and replaced.
CREATE TABLE review_digests (
    conversation_id  TEXT NOT NULL REFERENCES conversations (id),
    version          INTEGER NOT NULL,
    from_seq         INTEGER NOT NULL CHECK (from_seq >= 1),
    through_seq      INTEGER NOT NULL CHECK (through_seq >= from_seq),
    budget           INTEGER NOT NULL CHECK (budget >= 0),
    live_messages    INTEGER NOT NULL CHECK (live_messages >= 0),
    live_tokens      INTEGER NOT NULL CHECK (live_tokens >= 0),
    seq_sum          INTEGER NOT NULL CHECK (seq_sum >= 0),
    text             TEXT NOT NULL,
    tokens           INTEGER NOT NULL CHECK (tokens >= 0),
    used_at          INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, version, from_seq, through_seq, budget)
) WITHOUT ROWID;

-- The live messages' seqs and cached token counts, apart from their contents: a review checks
-- its cached summaries against the count, tokens and seq sum of thousands of messages, and a
-- step measures the uncovered messages it does not load, each with one aggregate. Without this
-- index SQLite reads every row's page, contents included, to sum a column. (deleted_at, always
-- NULL here, makes it a covering index for those queries' `deleted_at IS NULL`.)
CREATE INDEX messages_live_tokens ON messages (conversation_id, seq, tokens, deleted_at)
    WHERE deleted_at IS NULL;
