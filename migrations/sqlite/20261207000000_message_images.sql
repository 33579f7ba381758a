-- Images a tool returned (an MCP server's chart, a screenshot), kept with the tool message that
-- carries them: the history shows what the model saw even after the workspace file they were
-- saved to is rolled back or removed. The data is base64, as every provider takes it; `tokens`
-- is what the image costs in a request that shows it to the model (0 where it is not shown).
CREATE TABLE message_images (
    message_id  TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    ordinal     INTEGER NOT NULL CHECK (ordinal >= 0),
    media_type  TEXT NOT NULL CHECK (media_type LIKE 'image/%' AND length(media_type) <= 100),
    data        TEXT NOT NULL,
    tokens      INTEGER NOT NULL CHECK (tokens >= 0),
    PRIMARY KEY (message_id, ordinal)
);
