-- A decision on a figure of a report the run wrote (`report.md`), not only of its answer: the
-- figure is named by the report's workspace path beside the answer's seq and its offset in the
-- report. `path` is '' for a figure of the answer itself.
--
-- SQLite cannot change a primary key in place; nothing references `figure_decisions`, so a
-- plain rebuild keeps every row.
CREATE TABLE figure_decisions_rebuilt (
    conversation_id  TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    message_seq      INTEGER NOT NULL,
    path             TEXT NOT NULL DEFAULT '',
    start            INTEGER NOT NULL,
    text             TEXT NOT NULL,
    decision         TEXT NOT NULL CHECK (decision IN ('verify', 'estimate', 'correct', 'accept')),
    value            TEXT,
    failure_id       TEXT,
    decided_at       INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, message_seq, path, start)
);
INSERT INTO figure_decisions_rebuilt (conversation_id, message_seq, path, start, text, decision,
                                      value, failure_id, decided_at)
SELECT conversation_id, message_seq, '', start, text, decision, value, failure_id, decided_at
FROM figure_decisions;
DROP TABLE figure_decisions;
ALTER TABLE figure_decisions_rebuilt RENAME TO figure_decisions;
