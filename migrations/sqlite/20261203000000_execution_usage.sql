-- What each run cost, for the run history: the model calls it made and the tokens they sent and
-- received, as the provider reported them. A run from before this migration reads zero: its
-- usage was never kept.
ALTER TABLE executions ADD COLUMN model_calls INTEGER NOT NULL DEFAULT 0 CHECK (model_calls >= 0);
ALTER TABLE executions ADD COLUMN tokens_in INTEGER NOT NULL DEFAULT 0 CHECK (tokens_in >= 0);
ALTER TABLE executions ADD COLUMN tokens_out INTEGER NOT NULL DEFAULT 0 CHECK (tokens_out >= 0);
