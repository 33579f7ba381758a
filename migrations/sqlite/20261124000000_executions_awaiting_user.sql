-- An execution can now wait for the user (a failure to resolve, a question to answer) without
-- holding a `running` status that crash-resume would mark `interrupted`.
--
-- SQLite cannot change a CHECK in place, so `executions` is rebuilt. sqlx runs this file in one
-- transaction, where `PRAGMA foreign_keys` cannot be switched off, and eight tables reference
-- executions(id). SQLite's 12-step recipe (copy into a new table, drop the old, rename) therefore
-- does not work as is: dropping `executions` runs an implicit DELETE whose foreign-key violations,
-- even when deferred, are never cleared by a rename, so the commit fails. Instead the rows are
-- parked in a plain table, the old table is dropped (violations deferred), the new one takes its
-- name, and the rows are inserted back: each insert of a parent row clears the deferred
-- violations of the children that reference it, so the commit sees none left. Rowids are kept.
-- `defer_foreign_keys` switches itself off again at COMMIT.
PRAGMA defer_foreign_keys = ON;

-- Dropping and refilling executions makes SQLite look up, per execution, the rows that reference
-- it. These three child tables have no index on execution_id; without one, each lookup would scan
-- the whole table. They exist only for this migration.
CREATE INDEX rebuild_compactions_execution ON compactions (execution_id);
CREATE INDEX rebuild_summaries_execution ON summaries (execution_id);
CREATE INDEX rebuild_reviews_execution ON reviews (execution_id);

CREATE TABLE executions_parked AS SELECT rowid AS parked_rowid, * FROM executions;

CREATE TABLE executions_rebuilt (
    id               TEXT PRIMARY KEY NOT NULL,
    conversation_id  TEXT NOT NULL REFERENCES conversations (id),
    parent_id        TEXT REFERENCES executions (id),
    depth            INTEGER NOT NULL DEFAULT 0 CHECK (depth >= 0),
    task             TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'running', 'awaiting_user', 'succeeded', 'failed',
                                       'cancelled', 'interrupted')),
    sandbox_kind     TEXT NOT NULL DEFAULT 'host' CHECK (sandbox_kind IN ('host', 'docker')),
    provider_id      TEXT REFERENCES providers (id),
    result           TEXT,
    error            TEXT,
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,
    finished_at      INTEGER,
    updated_at       INTEGER NOT NULL
);

DROP TABLE executions;
ALTER TABLE executions_rebuilt RENAME TO executions;

-- Before the rows return, so each insert finds its subagents through an index.
CREATE INDEX executions_parent ON executions (parent_id);

INSERT INTO executions (rowid, id, conversation_id, parent_id, depth, task, status, sandbox_kind,
                        provider_id, result, error, created_at, started_at, finished_at, updated_at)
SELECT parked_rowid, id, conversation_id, parent_id, depth, task, status, sandbox_kind,
       provider_id, result, error, created_at, started_at, finished_at, updated_at
  FROM executions_parked ORDER BY parked_rowid;

DROP TABLE executions_parked;
DROP INDEX rebuild_compactions_execution;
DROP INDEX rebuild_summaries_execution;
DROP INDEX rebuild_reviews_execution;

CREATE INDEX executions_conversation ON executions (conversation_id, created_at);
CREATE INDEX executions_status ON executions (status);

-- todo_write carries two fields the plan had no room for: whether finishing the todo is a
-- checkpoint (a snapshot and a compaction point), and why a failed todo failed.
ALTER TABLE todos ADD COLUMN checkpoint INTEGER NOT NULL DEFAULT 0 CHECK (checkpoint IN (0, 1));
ALTER TABLE todos ADD COLUMN reason TEXT;
