-- A failure class of its own for an answer whose figures no tool output holds (`unlinked`),
-- and the analyst's answers to it: `verify` (the agent computes the figures with a tool),
-- `estimate` (the answer says so beside each), `correct` (the analyst's value replaces it) and
-- `accept`.
--
-- SQLite cannot change a CHECK in place; nothing references `failures`, so a plain rebuild
-- keeps every row (and rowid).
CREATE TABLE failures_rebuilt (
    id                 TEXT PRIMARY KEY NOT NULL,
    execution_id       TEXT NOT NULL REFERENCES executions (id),
    todo_id            TEXT REFERENCES todos (id),
    class              TEXT NOT NULL CHECK (class IN ('transient', 'data', 'logic', 'permission', 'system',
                                                      'context_overflow', 'cancelled', 'degenerate',
                                                      'unlinked')),
    message            TEXT NOT NULL,
    details            TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(details)),
    snapshot_id        TEXT REFERENCES snapshots (id),
    rolled_back        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(rolled_back)),
    suggested_actions  TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(suggested_actions)),
    resolution         TEXT CHECK (resolution IS NULL OR resolution IN ('retry', 'skip', 'replan', 'abort',
                                                                          'rollback', 'compress', 'verify',
                                                                          'estimate', 'correct', 'accept')),
    resolved_at        INTEGER,
    created_at         INTEGER NOT NULL,
    resolved_by        TEXT CHECK (resolved_by IS NULL OR resolved_by IN ('analyst', 'automatic'))
);
INSERT INTO failures_rebuilt (rowid, id, execution_id, todo_id, class, message, details, snapshot_id,
                              rolled_back, suggested_actions, resolution, resolved_at, created_at,
                              resolved_by)
SELECT rowid, id, execution_id, todo_id, class, message, details, snapshot_id,
       rolled_back, suggested_actions, resolution, resolved_at, created_at, resolved_by
FROM failures;
DROP TABLE failures;
ALTER TABLE failures_rebuilt RENAME TO failures;
CREATE INDEX failures_execution ON failures (execution_id, created_at);

-- What the analyst decided about each figure of an answer that no source held: the figure by
-- its answer and span, the decision, and the value they typed for a correction.
CREATE TABLE figure_decisions (
    conversation_id  TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    message_seq      INTEGER NOT NULL,
    start            INTEGER NOT NULL,
    text             TEXT NOT NULL,
    decision         TEXT NOT NULL CHECK (decision IN ('verify', 'estimate', 'correct', 'accept')),
    value            TEXT,
    failure_id       TEXT,
    decided_at       INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, message_seq, start)
);
