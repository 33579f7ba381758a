-- What each model call cost, as the provider reported it, with what its prompt cache did: the
-- tokens read from the cache (billed at a fraction of the input price) and written to it (billed
-- above it, by Anthropic). A run's sums stay on `executions`, kept in step by the trigger below
-- in the inserting statement itself, so the run history reads one row per run.
--
-- A column is NULL where the provider reported no usage for the call; the call still counts.
-- Calls made before this migration are only in the sums (their cache figures read zero).
CREATE TABLE model_calls (
    execution_id        TEXT NOT NULL REFERENCES executions (id),
    -- 1, 2, ... within the run.
    n                   INTEGER NOT NULL CHECK (n >= 1),
    tokens_in           INTEGER CHECK (tokens_in >= 0),
    tokens_out          INTEGER CHECK (tokens_out >= 0),
    cache_read_tokens   INTEGER CHECK (cache_read_tokens >= 0),
    cache_write_tokens  INTEGER CHECK (cache_write_tokens >= 0),
    created_at          INTEGER NOT NULL,
    PRIMARY KEY (execution_id, n)
) WITHOUT ROWID;

ALTER TABLE executions ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0
    CHECK (cache_read_tokens >= 0);
ALTER TABLE executions ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0
    CHECK (cache_write_tokens >= 0);

CREATE TRIGGER model_calls_sum AFTER INSERT ON model_calls
BEGIN
    UPDATE executions
    SET model_calls = model_calls + 1,
        tokens_in = tokens_in + coalesce(NEW.tokens_in, 0),
        tokens_out = tokens_out + coalesce(NEW.tokens_out, 0),
        cache_read_tokens = cache_read_tokens + coalesce(NEW.cache_read_tokens, 0),
        cache_write_tokens = cache_write_tokens + coalesce(NEW.cache_write_tokens, 0)
    WHERE id = NEW.execution_id;
END;
