-- A resolution of its own for a request too long for the model: see the SQLite migration of
-- the same name.
ALTER TABLE failures DROP CONSTRAINT failures_resolution_check;
ALTER TABLE failures ADD CONSTRAINT failures_resolution_check
    CHECK (resolution IS NULL OR resolution IN ('retry', 'skip', 'replan', 'abort', 'rollback', 'compress'));
