-- Choices that belong to the installation rather than to a conversation or a provider: the
-- provider runs use, the reviewer's provider, where tools run. One JSON object per key; never a
-- secret (the store refuses secret-looking keys, as for provider settings).
CREATE TABLE app_settings (
    key         TEXT PRIMARY KEY NOT NULL CHECK (length(key) BETWEEN 1 AND 64),
    value       TEXT NOT NULL CHECK (json_valid(value) AND json_type(value) = 'object'),
    updated_at  INTEGER NOT NULL
);
