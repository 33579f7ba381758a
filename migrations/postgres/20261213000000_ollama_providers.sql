-- A provider may speak Ollama's native chat API (`kind = 'ollama'`): see the SQLite migration
-- of the same name for why.
ALTER TABLE providers DROP CONSTRAINT providers_kind_check;
ALTER TABLE providers ADD CONSTRAINT providers_kind_check
    CHECK (kind IN ('openai', 'anthropic', 'ollama'));
