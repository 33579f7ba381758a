-- How each answer of the model ended and what it cost, for chat turns as for runs: the usage
-- the provider reported for the request that produced it (input, output, prompt-cache reads and
-- writes), its estimated cost, and whether the answer is whole. A chat turn kept no usage
-- before this table; a run's calls are also summed in `model_calls`, per run.
--
-- `ended`: `complete`, `cut` (the output cap ended it), `stopped` (the analyst stopped it while
-- it streamed: what had arrived is kept) or `looping` (Decima ended a stream that repeated
-- itself). `prompt_truncated` is set when the server reported fewer prompt tokens than were sent,
-- by more than the counting error: it dropped part of the prompt without saying so.
-- `calls_from_text` names the written form of tool calls that the server left in the text and
-- Decima read back (`hermes`, `bare_json`, `llama3`, `mistral`).
CREATE TABLE answers (
    message_id          TEXT PRIMARY KEY NOT NULL REFERENCES messages (id),
    conversation_id     TEXT NOT NULL REFERENCES conversations (id),
    ended               TEXT NOT NULL DEFAULT 'complete'
                        CHECK (ended IN ('complete', 'cut', 'stopped', 'looping')),
    tokens_in           INTEGER CHECK (tokens_in >= 0),
    tokens_out          INTEGER CHECK (tokens_out >= 0),
    cache_read_tokens   INTEGER CHECK (cache_read_tokens >= 0),
    cache_write_tokens  INTEGER CHECK (cache_write_tokens >= 0),
    cost_microdollars   INTEGER CHECK (cost_microdollars >= 0),
    prompt_truncated    INTEGER NOT NULL DEFAULT 0 CHECK (prompt_truncated IN (0, 1)),
    calls_from_text     TEXT,
    created_at          INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX answers_by_conversation ON answers (conversation_id);
