-- The analyst's MCP servers: one list for the installation, in the order they were added. The
-- configuration is JSON without the values that may be secret (environment and header values
-- live in the secret store; the store refuses a configuration that still holds one). A
-- conversation may switch a server off; approvals of a server's tool hold for one conversation
-- or, with no conversation, always.
CREATE TABLE mcp_servers (
    name        TEXT PRIMARY KEY NOT NULL CHECK (length(name) BETWEEN 1 AND 32),
    config      TEXT NOT NULL CHECK (json_valid(config) AND json_type(config) = 'object'),
    position    INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE conversation_mcp_servers (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    server          TEXT NOT NULL REFERENCES mcp_servers (name) ON DELETE CASCADE,
    enabled         INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    PRIMARY KEY (conversation_id, server)
);

CREATE TABLE mcp_approvals (
    server          TEXT NOT NULL REFERENCES mcp_servers (name) ON DELETE CASCADE,
    tool            TEXT NOT NULL CHECK (length(tool) BETWEEN 1 AND 256),
    conversation_id TEXT REFERENCES conversations (id) ON DELETE CASCADE,
    created_at      INTEGER NOT NULL
);
CREATE UNIQUE INDEX mcp_approvals_scope ON mcp_approvals (server, tool, ifnull(conversation_id, ''));
