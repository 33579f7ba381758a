-- Bulk writes index their messages in one statement, not one trigger per row.
--
-- The insert trigger fed FTS5 one row at a time: for a 10,000-message import the index cost
-- about 25 µs a message, most of the import's time. FTS5 takes the same rows several times
-- faster from one INSERT … SELECT. So the trigger now fires only while `messages_fts_live` says
-- so; a bulk insert (`Messages::append_batch`, `Conversations::import`) turns it off inside its
-- own transaction, inserts its rows, indexes them with one statement and turns it on again. No
-- other writer can run inside that transaction, and a failed one rolls the switch back with
-- the rows, so every committed message is indexed.
CREATE TABLE messages_fts_live (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    live INTEGER NOT NULL CHECK (live IN (0, 1))
);
INSERT INTO messages_fts_live (id, live) VALUES (1, 1);

DROP TRIGGER messages_fts_insert;
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN (SELECT live FROM messages_fts_live WHERE id = 1)
BEGIN
    INSERT INTO messages_fts (rowid, body)
    VALUES (NEW.rowid, substr(NEW.content, 1, 262144) || char(10) || coalesce(NEW.tool_calls, ''));
END;
