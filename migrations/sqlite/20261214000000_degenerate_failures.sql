-- A failure class of its own for an answer the model did not stop repeating (a small model's
-- loop, ended early by Decima): `degenerate`. Asking the same model again rarely mends it, and
-- the analyst is told so rather than shown a logic failure.
--
-- SQLite cannot change a CHECK in place; nothing references `failures`, so a plain rebuild
-- keeps every row (and rowid).
CREATE TABLE failures_rebuilt (
    id                 TEXT PRIMARY KEY NOT NULL,
    execution_id       TEXT NOT NULL REFERENCES executions (id),
    todo_id            TEXT REFERENCES todos (id),
    class              TEXT NOT NULL CHECK (class IN ('transient', 'data', 'logic', 'permission', 'system',
                                                      'context_overflow', 'cancelled', 'degenerate')),
    message            TEXT NOT NULL,
    details            TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(details)),
    snapshot_id        TEXT REFERENCES snapshots (id),
    rolled_back        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(rolled_back)),
    suggested_actions  TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(suggested_actions)),
    resolution         TEXT CHECK (resolution IS NULL OR resolution IN ('retry', 'skip', 'replan', 'abort', 'rollback')),
    resolved_at        INTEGER,
    created_at         INTEGER NOT NULL
);
INSERT INTO failures_rebuilt (rowid, id, execution_id, todo_id, class, message, details, snapshot_id,
                              rolled_back, suggested_actions, resolution, resolved_at, created_at)
SELECT rowid, id, execution_id, todo_id, class, message, details, snapshot_id,
       rolled_back, suggested_actions, resolution, resolved_at, created_at
FROM failures;
DROP TABLE failures;
ALTER TABLE failures_rebuilt RENAME TO failures;
CREATE INDEX failures_execution ON failures (execution_id, created_at);
