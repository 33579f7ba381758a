-- How each answer of the model ended and what it cost: see the SQLite migration of the same
-- name for what each column means.
CREATE TABLE answers (
    message_id          TEXT PRIMARY KEY NOT NULL REFERENCES messages (id),
    conversation_id     TEXT NOT NULL REFERENCES conversations (id),
    ended               TEXT NOT NULL DEFAULT 'complete'
                        CHECK (ended IN ('complete', 'cut', 'stopped', 'looping')),
    tokens_in           BIGINT CHECK (tokens_in >= 0),
    tokens_out          BIGINT CHECK (tokens_out >= 0),
    cache_read_tokens   BIGINT CHECK (cache_read_tokens >= 0),
    cache_write_tokens  BIGINT CHECK (cache_write_tokens >= 0),
    cost_microdollars   BIGINT CHECK (cost_microdollars >= 0),
    prompt_truncated    BOOLEAN NOT NULL DEFAULT FALSE,
    calls_from_text     TEXT,
    created_at          BIGINT NOT NULL
);

CREATE INDEX answers_by_conversation ON answers (conversation_id);

-- A run writes its answers: fenced as every other table a run writes.
CREATE TRIGGER answers_fence BEFORE INSERT OR UPDATE OR DELETE ON answers
    FOR EACH STATEMENT EXECUTE FUNCTION decima_check_fence();
