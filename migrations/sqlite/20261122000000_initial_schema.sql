-- Decima's whole schema. Times are integer milliseconds since the Unix epoch (UTC).
-- Nothing the agent touches is hard-deleted: rows carry `deleted_at` instead.
-- Ids are UUIDv7 text, so they sort by creation time.

-- Provider rows never hold secrets: API keys live in the OS keyring (or a 0600 file).
CREATE TABLE providers (
    id              TEXT PRIMARY KEY NOT NULL,
    name            TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('openai', 'anthropic')),
    preset          TEXT,
    base_url        TEXT NOT NULL,
    model           TEXT NOT NULL,
    context_window  INTEGER NOT NULL CHECK (context_window > 0),
    -- JSON object: compression thresholds, output reserve, tokenizer path, headers without secrets.
    settings        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    deleted_at      INTEGER
);
CREATE UNIQUE INDEX providers_live_name ON providers (name) WHERE deleted_at IS NULL;

-- Per-model correction of our token estimate, learned from the provider's reported usage.
CREATE TABLE token_calibrations (
    model       TEXT PRIMARY KEY NOT NULL,
    factor      REAL NOT NULL DEFAULT 1.0 CHECK (factor > 0),
    samples     INTEGER NOT NULL DEFAULT 0 CHECK (samples >= 0),
    updated_at  INTEGER NOT NULL
);

-- Prompt presets: native ones and SillyTavern cards/presets imported into the same model.
CREATE TABLE presets (
    id          TEXT PRIMARY KEY NOT NULL,
    name        TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('native', 'st_card', 'st_preset')),
    source      TEXT,
    body        TEXT NOT NULL CHECK (json_valid(body)),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    deleted_at  INTEGER
);

CREATE TABLE conversations (
    id          TEXT PRIMARY KEY NOT NULL,
    title       TEXT NOT NULL,
    preset_id   TEXT REFERENCES presets (id),
    -- The seq the next message gets. The messages_advance_seq trigger bumps it in the same write
    -- transaction as each insert, so seqs are monotonic and gapless even with many writers.
    next_seq    INTEGER NOT NULL DEFAULT 1 CHECK (next_seq >= 1),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    deleted_at  INTEGER
);
CREATE INDEX conversations_updated ON conversations (updated_at DESC);

-- One agent run. Subagents are executions with a parent.
CREATE TABLE executions (
    id               TEXT PRIMARY KEY NOT NULL,
    conversation_id  TEXT NOT NULL REFERENCES conversations (id),
    parent_id        TEXT REFERENCES executions (id),
    depth            INTEGER NOT NULL DEFAULT 0 CHECK (depth >= 0),
    task             TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled', 'interrupted')),
    sandbox_kind     TEXT NOT NULL DEFAULT 'host' CHECK (sandbox_kind IN ('host', 'docker')),
    provider_id      TEXT REFERENCES providers (id),
    result           TEXT,
    error            TEXT,
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,
    finished_at      INTEGER,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX executions_conversation ON executions (conversation_id, created_at);
CREATE INDEX executions_parent ON executions (parent_id);
CREATE INDEX executions_status ON executions (status);

CREATE TABLE messages (
    id                   TEXT PRIMARY KEY NOT NULL,
    conversation_id      TEXT NOT NULL REFERENCES conversations (id),
    execution_id         TEXT REFERENCES executions (id),
    seq                  INTEGER NOT NULL CHECK (seq >= 1),
    role                 TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    name                 TEXT,
    content              TEXT NOT NULL,
    reasoning            TEXT,
    -- Anthropic thinking blocks carry a signature that must be sent back unchanged.
    reasoning_signature  TEXT,
    -- JSON array of {id, name, arguments}; arguments is the raw JSON text the model produced.
    tool_calls           TEXT CHECK (tool_calls IS NULL OR json_valid(tool_calls)),
    tool_call_id         TEXT,
    -- Counted once, at insert, and never again.
    tokens               INTEGER NOT NULL CHECK (tokens >= 0),
    pinned               INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    created_at           INTEGER NOT NULL,
    deleted_at           INTEGER,
    UNIQUE (conversation_id, seq)
);
CREATE INDEX messages_execution ON messages (execution_id);

-- Keeps conversations.next_seq and updated_at in step with every insert, inside the inserting
-- statement's transaction. This lets one INSERT … SELECT take its seq from next_seq and advance it
-- in a single statement: appending is one round trip to SQLite.
CREATE TRIGGER messages_advance_seq AFTER INSERT ON messages
BEGIN
    UPDATE conversations
       SET next_seq = NEW.seq + 1,
           updated_at = MAX(updated_at, NEW.created_at)
     WHERE id = NEW.conversation_id AND next_seq <= NEW.seq;
END;
CREATE INDEX messages_pinned ON messages (conversation_id) WHERE pinned = 1 AND deleted_at IS NULL;

-- A compression event. Undo marks it undone and revives what it superseded.
CREATE TABLE compactions (
    id               TEXT PRIMARY KEY NOT NULL,
    conversation_id  TEXT NOT NULL REFERENCES conversations (id),
    execution_id     TEXT REFERENCES executions (id),
    level            TEXT NOT NULL CHECK (level IN ('standard', 'deep', 'phase', 'checkpoint')),
    trigger          TEXT NOT NULL CHECK (trigger IN ('auto', 'manual', 'phase', 'checkpoint', 'overflow')),
    strategy         TEXT NOT NULL CHECK (strategy IN ('extract', 'llm', 'structured')),
    tokens_before    INTEGER NOT NULL CHECK (tokens_before >= 0),
    tokens_after     INTEGER NOT NULL CHECK (tokens_after >= 0),
    created_at       INTEGER NOT NULL,
    undone_at        INTEGER
);
CREATE INDEX compactions_conversation ON compactions (conversation_id, created_at);

-- A segment or global summary over a seq range. The messages it covers stay in place.
CREATE TABLE summaries (
    id               TEXT PRIMARY KEY NOT NULL,
    conversation_id  TEXT NOT NULL REFERENCES conversations (id),
    execution_id     TEXT REFERENCES executions (id),
    compaction_id    TEXT REFERENCES compactions (id),
    level            TEXT NOT NULL CHECK (level IN ('segment', 'global')),
    start_seq        INTEGER NOT NULL CHECK (start_seq >= 1),
    end_seq          INTEGER NOT NULL,
    text             TEXT NOT NULL,
    tokens           INTEGER NOT NULL CHECK (tokens >= 0),
    strategy         TEXT NOT NULL CHECK (strategy IN ('extract', 'llm', 'structured')),
    superseded_by    TEXT REFERENCES summaries (id),
    created_at       INTEGER NOT NULL,
    CHECK (end_seq >= start_seq)
);
CREATE INDEX summaries_live ON summaries (conversation_id, level, start_seq) WHERE superseded_by IS NULL;
CREATE INDEX summaries_compaction ON summaries (compaction_id);

-- The per-step record of an execution. Summary rows fold a batch of older steps.
CREATE TABLE steps (
    id             TEXT PRIMARY KEY NOT NULL,
    execution_id   TEXT NOT NULL REFERENCES executions (id),
    seq            INTEGER NOT NULL CHECK (seq >= 1),
    kind           TEXT NOT NULL CHECK (kind IN ('analysis', 'action', 'supervision', 'summary')),
    content        TEXT NOT NULL,
    tokens         INTEGER NOT NULL CHECK (tokens >= 0),
    covers_from    INTEGER,
    covers_to      INTEGER,
    superseded_by  TEXT REFERENCES steps (id),
    created_at     INTEGER NOT NULL,
    UNIQUE (execution_id, seq)
);

-- The plan of an execution. Pinned todos are never compressed.
CREATE TABLE todos (
    id            TEXT PRIMARY KEY NOT NULL,
    execution_id  TEXT NOT NULL REFERENCES executions (id),
    position      INTEGER NOT NULL,
    title         TEXT NOT NULL,
    status        TEXT NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'in_progress', 'completed', 'failed', 'skipped')),
    phase         TEXT,
    pinned        INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    deleted_at    INTEGER
);
CREATE INDEX todos_execution ON todos (execution_id, position);

-- Taken when a todo starts and at checkpoints: the state a rollback returns to.
CREATE TABLE snapshots (
    id                 TEXT PRIMARY KEY NOT NULL,
    execution_id       TEXT NOT NULL REFERENCES executions (id),
    todo_id            TEXT REFERENCES todos (id),
    reason             TEXT NOT NULL CHECK (reason IN ('todo_start', 'checkpoint', 'manual')),
    message_seq        INTEGER NOT NULL CHECK (message_seq >= 0),
    todo_state         TEXT NOT NULL CHECK (json_valid(todo_state)),
    workspace_archive  TEXT,
    created_at         INTEGER NOT NULL
);
CREATE INDEX snapshots_execution ON snapshots (execution_id, created_at);

CREATE TABLE failures (
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
    resolution         TEXT CHECK (resolution IS NULL OR resolution IN ('retry', 'skip', 'replan', 'abort')),
    resolved_at        INTEGER,
    created_at         INTEGER NOT NULL
);
CREATE INDEX failures_execution ON failures (execution_id, created_at);

-- Tenth-man results. cache_key is (execution, mode, type, focus, last seq), hashed.
CREATE TABLE reviews (
    id                    TEXT PRIMARY KEY NOT NULL,
    conversation_id       TEXT NOT NULL REFERENCES conversations (id),
    execution_id          TEXT REFERENCES executions (id),
    mode                  TEXT NOT NULL CHECK (mode IN ('full_history', 'recent_messages', 'specific_content')),
    review_type           TEXT NOT NULL CHECK (review_type IN ('quick', 'full')),
    focus                 TEXT,
    trigger               TEXT NOT NULL CHECK (trigger IN ('tool', 'system', 'user')),
    risk_level            TEXT NOT NULL CHECK (risk_level IN ('low', 'medium', 'high', 'critical')),
    findings              TEXT NOT NULL CHECK (json_valid(findings)),
    recommendations       TEXT NOT NULL CHECK (json_valid(recommendations)),
    reviewed_through_seq  INTEGER NOT NULL CHECK (reviewed_through_seq >= 0),
    language              TEXT,
    cache_key             TEXT NOT NULL,
    created_at            INTEGER NOT NULL
);
CREATE INDEX reviews_cache ON reviews (cache_key);
CREATE INDEX reviews_conversation ON reviews (conversation_id, created_at);

-- Append-only log of everything the runtime did, rollbacks included.
CREATE TABLE events (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id  TEXT REFERENCES conversations (id),
    execution_id     TEXT REFERENCES executions (id),
    kind             TEXT NOT NULL,
    payload          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(payload)),
    created_at       INTEGER NOT NULL
);
CREATE INDEX events_conversation ON events (conversation_id, id);
CREATE INDEX events_execution ON events (execution_id, id);

-- Where a conversation's history was last exported, so the next export only appends what is new.
-- `bytes` is the file's length after that export: a file of another length was changed or half
-- written since, and is rewritten rather than appended to.
CREATE TABLE history_exports (
    conversation_id  TEXT NOT NULL REFERENCES conversations (id),
    path             TEXT NOT NULL,
    format           TEXT NOT NULL CHECK (format IN ('text', 'jsonl', 'md')),
    last_seq         INTEGER NOT NULL CHECK (last_seq >= 0),
    bytes            INTEGER NOT NULL CHECK (bytes >= 0),
    updated_at       INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, path)
);
