-- The tenth man. A review may find no risk at all ('none'), says it in a summary, asks open
-- questions, and records what it read: the mode's argument (a count or the reviewed content),
-- the first seq it read (an incremental review starts after the last one), and the model that
-- wrote it. SQLite cannot change a CHECK in place, so the table is rebuilt; nothing refers to it.
CREATE TABLE reviews_rebuilt (
    id                    TEXT PRIMARY KEY NOT NULL,
    conversation_id       TEXT NOT NULL REFERENCES conversations (id),
    execution_id          TEXT REFERENCES executions (id),
    mode                  TEXT NOT NULL CHECK (mode IN ('full_history', 'recent_messages', 'specific_content')),
    mode_argument         TEXT,
    review_type           TEXT NOT NULL CHECK (review_type IN ('quick', 'full')),
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
    created_at            INTEGER NOT NULL
);

INSERT INTO reviews_rebuilt (id, conversation_id, execution_id, mode, review_type, focus, trigger,
    risk_level, findings, recommendations, reviewed_through_seq, language, cache_key, created_at)
SELECT id, conversation_id, execution_id, mode, review_type, focus, trigger, risk_level, findings,
    recommendations, reviewed_through_seq, language, cache_key, created_at
FROM reviews;

DROP TABLE reviews;
ALTER TABLE reviews_rebuilt RENAME TO reviews;
CREATE INDEX reviews_cache ON reviews (cache_key);
CREATE INDEX reviews_conversation ON reviews (conversation_id, created_at);
CREATE INDEX reviews_execution ON reviews (execution_id);

-- Each finding of a review, so the open ones can be carried into the next review of the same
-- conversation or execution. A finding stays open until a later review closes it.
CREATE TABLE review_findings (
    id                TEXT PRIMARY KEY NOT NULL,
    review_id         TEXT NOT NULL REFERENCES reviews (id),
    conversation_id   TEXT NOT NULL REFERENCES conversations (id),
    execution_id      TEXT REFERENCES executions (id),
    position          INTEGER NOT NULL CHECK (position >= 0),
    title             TEXT NOT NULL,
    severity          TEXT NOT NULL CHECK (severity IN ('low', 'medium', 'high', 'critical')),
    argument          TEXT NOT NULL,
    evidence_seqs     TEXT NOT NULL CHECK (json_valid(evidence_seqs)),
    recommendation    TEXT NOT NULL,
    closed_by         TEXT REFERENCES reviews (id),
    closed_reason     TEXT,
    UNIQUE (review_id, position)
);
CREATE INDEX review_findings_open ON review_findings (conversation_id, closed_by);

-- A high or critical final review contests the run's result; the answer stays as it was.
ALTER TABLE executions ADD COLUMN contested INTEGER NOT NULL DEFAULT 0 CHECK (contested IN (0, 1));

-- Who reviews this conversation when no reviewer is named: a provider's name, or NULL for the
-- agent's own provider.
ALTER TABLE conversations ADD COLUMN reviewer_provider TEXT;
