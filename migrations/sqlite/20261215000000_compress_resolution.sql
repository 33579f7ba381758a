-- A resolution of its own for a request too long for the model: `compress` fits the run to the
-- window the server says it serves, compresses the conversation deeply and tries the step
-- again. Retry alone would be refused again, so an overflow offers this instead.
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
    resolution         TEXT CHECK (resolution IS NULL OR resolution IN ('retry', 'skip', 'replan', 'abort',
                                                                          'rollback', 'compress')),
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
