-- A provider may speak Ollama's native chat API (`kind = 'ollama'`): its OpenAI-compatible
-- endpoint drops any `options` object, so only the native one lets Decima set `num_ctx` (the
-- window it plans for) with every request; without it Ollama cuts a long prompt from the front.
--
-- SQLite cannot change a CHECK in place, so `providers` is rebuilt the way the executions
-- rebuild does it (see 20261124000000): `executions.provider_id` references providers(id), so
-- the rows are parked, the old table dropped with the foreign keys deferred, the new one takes
-- its name and the rows go back, which clears the deferred violations. Rowids are kept.
PRAGMA defer_foreign_keys = ON;

CREATE TABLE providers_parked AS SELECT rowid AS parked_rowid, * FROM providers;

CREATE TABLE providers_rebuilt (
    id              TEXT PRIMARY KEY NOT NULL,
    name            TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('openai', 'anthropic', 'ollama')),
    preset          TEXT,
    base_url        TEXT NOT NULL,
    model           TEXT NOT NULL,
    context_window  INTEGER NOT NULL CHECK (context_window > 0),
    -- JSON object: compression thresholds, output reserve, tokenizer path, the served window
    -- and where the window comes from; never a secret.
    settings        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    deleted_at      INTEGER
);

DROP TABLE providers;
ALTER TABLE providers_rebuilt RENAME TO providers;

INSERT INTO providers (rowid, id, name, kind, preset, base_url, model, context_window, settings,
                       created_at, updated_at, deleted_at)
SELECT parked_rowid, id, name, kind, preset, base_url, model, context_window, settings,
       created_at, updated_at, deleted_at
FROM providers_parked ORDER BY parked_rowid;

DROP TABLE providers_parked;

CREATE UNIQUE INDEX providers_live_name ON providers (name) WHERE deleted_at IS NULL;
