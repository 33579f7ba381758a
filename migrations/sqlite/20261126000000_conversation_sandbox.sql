-- The Docker sandbox settings of a conversation (image, network, user, limits), as JSON; NULL
-- means the defaults. A tree of subagents uses its root conversation's settings and container.
ALTER TABLE conversations ADD COLUMN sandbox_config TEXT
    CHECK (sandbox_config IS NULL OR json_valid(sandbox_config));
