-- The tenth man recomputes: a review of type `recompute` works out an answer's figures again
-- in a fresh sandbox holding the run's inputs as they were when it started (a snapshot taken
-- as a run starts, reason `run_start`), and each figure it recomputed keeps a receipt.
--
-- SQLite cannot change a CHECK in place, `review_findings` refers to `reviews` and `failures`
-- to `snapshots`, so both tables are rebuilt the way
-- 20261124000000_executions_awaiting_user.sql explains: the rows are parked, the old table
-- dropped with its children's violations deferred, the new one created under its name, and
-- the rows put back, which clears those violations. Rowids are kept.
PRAGMA defer_foreign_keys = ON;

CREATE TABLE snapshots_parked AS SELECT rowid AS parked_rowid, * FROM snapshots;
DROP TABLE snapshots;
CREATE TABLE snapshots (
    id                 TEXT PRIMARY KEY NOT NULL,
    execution_id       TEXT NOT NULL REFERENCES executions (id),
    todo_id            TEXT REFERENCES todos (id),
    reason             TEXT NOT NULL CHECK (reason IN ('run_start', 'todo_start', 'checkpoint', 'manual')),
    message_seq        INTEGER NOT NULL CHECK (message_seq >= 0),
    todo_state         TEXT NOT NULL CHECK (json_valid(todo_state)),
    workspace_archive  TEXT,
    created_at         INTEGER NOT NULL
);
INSERT INTO snapshots (rowid, id, execution_id, todo_id, reason, message_seq, todo_state,
    workspace_archive, created_at)
SELECT parked_rowid, id, execution_id, todo_id, reason, message_seq, todo_state,
    workspace_archive, created_at
FROM snapshots_parked;
DROP TABLE snapshots_parked;
CREATE INDEX snapshots_execution ON snapshots (execution_id, created_at);

CREATE TABLE reviews_parked AS SELECT rowid AS parked_rowid, * FROM reviews;
DROP TABLE reviews;

CREATE TABLE reviews (
    id                    TEXT PRIMARY KEY NOT NULL,
    conversation_id       TEXT NOT NULL REFERENCES conversations (id),
    execution_id          TEXT REFERENCES executions (id),
    mode                  TEXT NOT NULL CHECK (mode IN ('full_history', 'recent_messages', 'specific_content')),
    mode_argument         TEXT,
    review_type           TEXT NOT NULL CHECK (review_type IN ('quick', 'full', 'recompute')),
    focus                 TEXT,
    trigger               TEXT NOT NULL CHECK (trigger IN ('tool', 'system', 'user')),
    risk_level            TEXT NOT NULL CHECK (risk_level IN ('none', 'low', 'medium', 'high', 'critical')),
    summary               TEXT NOT NULL DEFAULT '',
    findings              TEXT NOT NULL CHECK (json_valid(findings)),
    open_questions        TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(open_questions)),
    recommendations       TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(recommendations)),
    reviewed_from_seq     INTEGER NOT NULL DEFAULT 0 CHECK (reviewed_from_seq >= 0),
    reviewed_through_seq  INTEGER NOT NULL CHECK (reviewed_through_seq >= 0),
    language              TEXT,
    provider              TEXT,
    model                 TEXT,
    input_tokens          INTEGER NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    cache_key             TEXT NOT NULL,
    created_at            INTEGER NOT NULL,
    passes                TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(passes))
);

INSERT INTO reviews (rowid, id, conversation_id, execution_id, mode, mode_argument, review_type,
    focus, trigger, risk_level, summary, findings, open_questions, recommendations,
    reviewed_from_seq, reviewed_through_seq, language, provider, model, input_tokens, cache_key,
    created_at, passes)
SELECT parked_rowid, id, conversation_id, execution_id, mode, mode_argument, review_type,
    focus, trigger, risk_level, summary, findings, open_questions, recommendations,
    reviewed_from_seq, reviewed_through_seq, language, provider, model, input_tokens, cache_key,
    created_at, passes
FROM reviews_parked;
DROP TABLE reviews_parked;

CREATE INDEX reviews_cache ON reviews (cache_key);
CREATE INDEX reviews_conversation ON reviews (conversation_id, created_at);
CREATE INDEX reviews_execution ON reviews (execution_id);

-- What a recompute review got for one figure of an answer (the figure by its answer's seq and
-- its byte offset there): the value it reached, whether that agrees with the figure within the
-- figure's precision, how it reached it, and its code and commands as the receipt.
CREATE TABLE figure_receipts (
    conversation_id  TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    message_seq      INTEGER NOT NULL,
    start            INTEGER NOT NULL,
    review_id        TEXT NOT NULL REFERENCES reviews (id),
    text             TEXT NOT NULL,
    recomputed       TEXT,
    agrees           INTEGER NOT NULL CHECK (agrees IN (0, 1)),
    derivation       TEXT NOT NULL,
    code             TEXT NOT NULL,
    created_at       INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, message_seq, start, review_id)
);
