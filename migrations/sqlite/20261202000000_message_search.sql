-- Full-text search over every conversation's messages (the sidebar's search and find in a
-- conversation).
--
-- The trigram tokenizer matches any substring of three characters or more, case-insensitively,
-- in any script: a word's middle ("2023" in "FY2023"), an identifier, Chinese text (which has no
-- spaces for a word tokenizer to split on). Shorter queries fall back to a scan (`search.rs`).
--
-- The table is contentless (it keeps the index, not a second copy of the text) and its rows are
-- keyed by the message's rowid. Triggers keep it in step with every writer: the app, the CLI,
-- an import. What is indexed is a message's first 256 KiB characters and its tool calls; a
-- 10 MB tool output is still found by its head, without holding the write lock for seconds.
-- Soft-deleted messages and conversations stay indexed and are filtered out by the query, so a
-- rollback or an Undo costs the index nothing.
--
-- VACUUM may renumber the rowids of a table without an INTEGER PRIMARY KEY; the app never runs
-- it, and the search checks every hit against the message's text before showing it.
CREATE VIRTUAL TABLE messages_fts USING fts5(
    body,
    tokenize = 'trigram',
    content = '',
    contentless_delete = 1
);

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
BEGIN
    INSERT INTO messages_fts (rowid, body)
    VALUES (NEW.rowid, substr(NEW.content, 1, 262144) || char(10) || coalesce(NEW.tool_calls, ''));
END;

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
BEGIN
    DELETE FROM messages_fts WHERE rowid = OLD.rowid;
END;

CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, tool_calls ON messages
BEGIN
    DELETE FROM messages_fts WHERE rowid = OLD.rowid;
    INSERT INTO messages_fts (rowid, body)
    VALUES (NEW.rowid, substr(NEW.content, 1, 262144) || char(10) || coalesce(NEW.tool_calls, ''));
END;

-- The history written before this migration.
INSERT INTO messages_fts (rowid, body)
SELECT rowid, substr(content, 1, 262144) || char(10) || coalesce(tool_calls, '') FROM messages;
