-- How a run the analyst ended is remembered, so the conversation can say so where it happened.
--
-- A todo that was in progress when the analyst stopped the run, or aborted it after a failure,
-- becomes `cancelled` rather than staying `in_progress` forever. SQLite cannot change a CHECK
-- in place, and snapshots and failures reference todos(id), so the table is rebuilt the way
-- 20261124000000 rebuilt executions: the rows are parked, the old table dropped (its children's
-- violations deferred), the new one takes its name, and the rows go back in, each insert
-- clearing the deferred violations of the rows that reference it. Rowids are kept.
PRAGMA defer_foreign_keys = ON;

-- The refill looks up, per todo, the rows that reference it: through an index, not a scan.
CREATE INDEX rebuild_snapshots_todo ON snapshots (todo_id);
CREATE INDEX rebuild_failures_todo ON failures (todo_id);

CREATE TABLE todos_parked AS SELECT rowid AS parked_rowid, * FROM todos;

CREATE TABLE todos_rebuilt (
    id            TEXT PRIMARY KEY NOT NULL,
    execution_id  TEXT NOT NULL REFERENCES executions (id),
    position      INTEGER NOT NULL,
    title         TEXT NOT NULL,
    status        TEXT NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'in_progress', 'completed', 'failed', 'skipped',
                                    'cancelled')),
    phase         TEXT,
    pinned        INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    deleted_at    INTEGER,
    checkpoint    INTEGER NOT NULL DEFAULT 0 CHECK (checkpoint IN (0, 1)),
    reason        TEXT
);

DROP TABLE todos;
ALTER TABLE todos_rebuilt RENAME TO todos;

INSERT INTO todos (rowid, id, execution_id, position, title, status, phase, pinned, created_at,
                   updated_at, deleted_at, checkpoint, reason)
SELECT parked_rowid, id, execution_id, position, title, status, phase, pinned, created_at,
       updated_at, deleted_at, checkpoint, reason
  FROM todos_parked ORDER BY parked_rowid;

DROP TABLE todos_parked;
DROP INDEX rebuild_snapshots_todo;
DROP INDEX rebuild_failures_todo;
CREATE INDEX todos_execution ON todos (execution_id, position);

-- Who ended the run and where: `stop` (the analyst's Stop) or `abort` (the analyst's answer to
-- a failure), at which step, after which message. Runs that ended otherwise leave them NULL.
ALTER TABLE executions ADD COLUMN ended_by TEXT CHECK (ended_by IN ('stop', 'abort'));
ALTER TABLE executions ADD COLUMN ended_at_step INTEGER CHECK (ended_at_step >= 0);
ALTER TABLE executions ADD COLUMN ended_after_seq INTEGER CHECK (ended_after_seq >= 0);

-- Runs cancelled before this migration: their open todos were left in progress.
UPDATE todos SET status = 'cancelled', reason = 'the run was cancelled'
WHERE status = 'in_progress' AND deleted_at IS NULL
  AND execution_id IN (SELECT id FROM executions WHERE status = 'cancelled');
