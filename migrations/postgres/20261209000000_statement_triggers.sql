-- Bulk writes on PostgreSQL: one update of the conversation per statement, not per message.
--
-- The baseline kept a conversation's next seq and live counts with row triggers, as SQLite
-- does: every message inserted (or soft-deleted, or restored) updated its conversation's row.
-- SQLite updates that row in place. PostgreSQL writes a new version of it each time, and within
-- one transaction none of the old versions can be pruned, so each update first walks past all
-- the versions the transaction already made: an import (or `decima db copy`, or a rollback) of
-- n messages costs n² steps. 10,000 messages took 6 s to import (SQLite: 0.3 s), 100,000 more
-- than five minutes.
--
-- Statement triggers with transition tables do the same bookkeeping once per statement and
-- conversation: an import's multi-row INSERTs of 64 messages make one version per batch. The
-- results are the same as the row triggers', which the store suite checks on both backends.
-- The change notification becomes one per statement and conversation too, naming the lowest
-- seq written: a reader re-reads from it (see `live.rs`).
--
-- PostgreSQL allows transition tables only on triggers of one event with no column list, so
-- the triggers on UPDATE fire for every UPDATE statement of messages and find in the two
-- tables the rows whose `deleted_at` changed; the notification on UPDATE is a trigger of its
-- own (`messages_notify_update`).

DROP TRIGGER messages_advance_seq ON messages;
DROP TRIGGER messages_count_insert ON messages;
DROP TRIGGER messages_count_delete ON messages;
DROP TRIGGER messages_count_restore ON messages;
DROP TRIGGER messages_notify ON messages;

CREATE OR REPLACE FUNCTION messages_advance_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- As the row trigger did for each message in seq order: the next seq moves past the
    -- highest one written, and `updated_at` takes the newest time of the messages at or past
    -- the old next seq.
    UPDATE conversations c
       SET next_seq = n.last_seq + 1,
           updated_at = GREATEST(c.updated_at, n.last_at)
      FROM (SELECT i.conversation_id,
                   max(i.seq) AS last_seq,
                   max(i.created_at) FILTER (WHERE i.seq >= cc.next_seq) AS last_at
              FROM inserted i JOIN conversations cc ON cc.id = i.conversation_id
             GROUP BY i.conversation_id) n
     WHERE c.id = n.conversation_id AND c.next_seq <= n.last_seq;
    RETURN NULL;
END;
$$;
CREATE TRIGGER messages_advance_seq AFTER INSERT ON messages
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION messages_advance_seq();

CREATE OR REPLACE FUNCTION messages_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE conversations c
       SET live_messages = c.live_messages + n.messages,
           live_tokens = c.live_tokens + n.tokens
      FROM (SELECT conversation_id, count(*) AS messages, sum(tokens)::BIGINT AS tokens
              FROM inserted WHERE deleted_at IS NULL
             GROUP BY conversation_id) n
     WHERE c.id = n.conversation_id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER messages_count_insert AFTER INSERT ON messages
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION messages_count_insert();

CREATE OR REPLACE FUNCTION messages_count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE conversations c
       SET live_messages = c.live_messages - n.messages,
           live_tokens = c.live_tokens - n.tokens
      FROM (SELECT a.conversation_id, count(*) AS messages, sum(b.tokens)::BIGINT AS tokens
              FROM after_rows a JOIN before_rows b ON b.id = a.id
             WHERE b.deleted_at IS NULL AND a.deleted_at IS NOT NULL
             GROUP BY a.conversation_id) n
     WHERE c.id = n.conversation_id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER messages_count_delete AFTER UPDATE ON messages
    REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
    FOR EACH STATEMENT EXECUTE FUNCTION messages_count_delete();

CREATE OR REPLACE FUNCTION messages_count_restore() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE conversations c
       SET live_messages = c.live_messages + n.messages,
           live_tokens = c.live_tokens + n.tokens
      FROM (SELECT a.conversation_id, count(*) AS messages, sum(a.tokens)::BIGINT AS tokens
              FROM after_rows a JOIN before_rows b ON b.id = a.id
             WHERE b.deleted_at IS NOT NULL AND a.deleted_at IS NULL
             GROUP BY a.conversation_id) n
     WHERE c.id = n.conversation_id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER messages_count_restore AFTER UPDATE ON messages
    REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
    FOR EACH STATEMENT EXECUTE FUNCTION messages_count_restore();

CREATE OR REPLACE FUNCTION decima_notify_message() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    written RECORD;
BEGIN
    FOR written IN SELECT conversation_id, min(seq) AS seq FROM changed GROUP BY conversation_id
    LOOP
        PERFORM pg_notify('decima_changes', 'm:' || written.conversation_id || ':' || written.seq);
    END LOOP;
    RETURN NULL;
END;
$$;
CREATE TRIGGER messages_notify AFTER INSERT ON messages
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION decima_notify_message();
CREATE TRIGGER messages_notify_update AFTER UPDATE ON messages
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION decima_notify_message();
