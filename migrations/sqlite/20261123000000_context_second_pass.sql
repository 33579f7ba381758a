-- A rollback soft-deletes messages after a seq. Summaries that cover any of them must stop
-- reaching the model, and must stay out even if an undo would otherwise revive them, so they are
-- retired with their own mark rather than through superseded_by (which undo clears).
ALTER TABLE summaries ADD COLUMN rolled_back_at INTEGER;

-- Token counts of the texts a step counts afresh (the preset's parts after macros, the session
-- context), keyed by the SHA-256 of what was counted, per conversation. A short-lived process
-- such as `decima context` then never has to build the tokenizer's tables when nothing changed.
-- Message counts do not live here: they are counted once, at insert, in messages.tokens.
CREATE TABLE token_memo (
    conversation_id  TEXT NOT NULL REFERENCES conversations (id),
    digest           TEXT NOT NULL,
    tokens           INTEGER NOT NULL CHECK (tokens >= 0),
    used_at          INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, digest)
) WITHOUT ROWID;

-- Live message count and cached tokens per conversation, kept by triggers in the writing
-- statement's transaction. Reading a conversation (every step does) then costs one row, not an
-- aggregate over its whole history.
ALTER TABLE conversations ADD COLUMN live_messages INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN live_tokens INTEGER NOT NULL DEFAULT 0;
UPDATE conversations SET
    live_messages = (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = conversations.id AND m.deleted_at IS NULL),
    live_tokens = (SELECT COALESCE(SUM(m.tokens), 0) FROM messages m WHERE m.conversation_id = conversations.id AND m.deleted_at IS NULL);

CREATE TRIGGER messages_count_insert AFTER INSERT ON messages WHEN NEW.deleted_at IS NULL
BEGIN
    UPDATE conversations
       SET live_messages = live_messages + 1, live_tokens = live_tokens + NEW.tokens
     WHERE id = NEW.conversation_id;
END;

CREATE TRIGGER messages_count_delete AFTER UPDATE OF deleted_at ON messages
    WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL
BEGIN
    UPDATE conversations
       SET live_messages = live_messages - 1, live_tokens = live_tokens - OLD.tokens
     WHERE id = NEW.conversation_id;
END;

CREATE TRIGGER messages_count_restore AFTER UPDATE OF deleted_at ON messages
    WHEN OLD.deleted_at IS NOT NULL AND NEW.deleted_at IS NULL
BEGIN
    UPDATE conversations
       SET live_messages = live_messages + 1, live_tokens = live_tokens + NEW.tokens
     WHERE id = NEW.conversation_id;
END;
