-- One run per conversation, and a failure the analyst can roll back.
--
-- A conversation has at most one active execution (running, or awaiting the analyst's choice):
-- two runs writing into one history interleave their messages, and the requests both send
-- afterwards put another run's message between a tool call and its result, which providers
-- refuse. The store enforces it, so it holds across processes (the CLI and the window at once).
--
-- Executions that broke the rule before this migration keep the newest active one per
-- conversation; the others become `interrupted`, from which they can be resumed once the
-- conversation is free again. Nothing is deleted.
UPDATE executions
SET status = 'interrupted', updated_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000
WHERE status IN ('running', 'awaiting_user')
  AND EXISTS (
      SELECT 1 FROM executions AS newer
      WHERE newer.conversation_id = executions.conversation_id
        AND newer.status IN ('running', 'awaiting_user')
        AND (newer.created_at > executions.created_at
             OR (newer.created_at = executions.created_at AND newer.id > executions.id))
  );

CREATE UNIQUE INDEX executions_one_active
    ON executions (conversation_id) WHERE status IN ('running', 'awaiting_user');

-- Short uses of a conversation that are not executions but must not interleave with one: a
-- chat turn (its question and its answer belong together) and a compression. A claim lapses
-- at `expires_at` unless its holder renews it, so a process that died frees the conversation
-- by itself. `token` identifies the holder; `owner` says who it is, for the refusal message.
CREATE TABLE conversation_claims (
    conversation_id  TEXT PRIMARY KEY NOT NULL REFERENCES conversations (id),
    kind             TEXT NOT NULL CHECK (kind IN ('chat', 'compression')),
    token            TEXT NOT NULL,
    owner            TEXT NOT NULL,
    claimed_at       INTEGER NOT NULL,
    expires_at       INTEGER NOT NULL
);

-- `rollback` joins the choices a failure can be answered with: a failure that did not roll
-- back (the step budget) can be rolled back on request, after which the analyst chooses again.
-- SQLite cannot change a CHECK in place; nothing references `failures`, so a plain rebuild
-- keeps every row (and rowid).
CREATE TABLE failures_rebuilt (
    id                 TEXT PRIMARY KEY NOT NULL,
    execution_id       TEXT NOT NULL REFERENCES executions (id),
    todo_id            TEXT REFERENCES todos (id),
    class              TEXT NOT NULL CHECK (class IN ('transient', 'data', 'logic', 'permission', 'system',
                                                      'context_overflow', 'cancelled')),
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
