-- Runs that survive their machine. On one machine a running execution is owned through a
-- kernel lock on a file (the runtime's `lease.rs`); machines sharing this database cannot see
-- each other's locks, so here a run holds a lease in the store instead:
--
-- * a claim is atomic: it takes a free or lapsed lease and raises its epoch (never reset: a
--   release only lets the lease lapse, so an epoch is never handed out twice);
-- * the holder renews it at a third of its time to live, by epoch;
-- * every write a runner makes goes through connections that carry its fence (`decima.fence`,
--   "<execution>/<epoch>", set at connect), and the statement trigger below refuses the write
--   unless that epoch still holds the lease. The row lock it takes (FOR SHARE) makes a claim by
--   another process wait until the write commits, so a write is never half fenced.
--
-- Times are the server's clock (milliseconds since the epoch), never a desktop's: two machines'
-- clocks may disagree, the database's is the one they share.

CREATE TABLE execution_leases (
    execution_id  TEXT PRIMARY KEY NOT NULL,
    epoch         BIGINT NOT NULL CHECK (epoch > 0),
    owner         TEXT NOT NULL,
    expires_at    BIGINT NOT NULL
);

-- The server's time in milliseconds, as every other timestamp column holds it.
CREATE FUNCTION decima_now_ms() RETURNS BIGINT
LANGUAGE sql VOLATILE AS $$
    SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT
$$;

-- Refuses a statement from a fenced connection whose lease was taken over. Connections
-- without a fence (the desktop's window, the CLI's reads, an unfenced tool) pass.
CREATE FUNCTION decima_check_fence() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    fence TEXT := current_setting('decima.fence', true);
BEGIN
    IF fence IS NULL OR fence = '' THEN
        RETURN NULL;
    END IF;
    PERFORM 1 FROM execution_leases
     WHERE execution_id = split_part(fence, '/', 1)
       AND epoch = split_part(fence, '/', 2)::BIGINT
       FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the lease of execution % (epoch %) was taken over by another process',
            split_part(fence, '/', 1), split_part(fence, '/', 2)
            USING ERRCODE = 'DL001';
    END IF;
    RETURN NULL;
END;
$$;

-- Every table a run writes is fenced: a statement, not a row, pays the check.
DO $$
DECLARE
    fenced TEXT;
BEGIN
    FOREACH fenced IN ARRAY ARRAY[
        'conversations', 'executions', 'compactions', 'summaries', 'messages', 'message_images',
        'todos', 'snapshots', 'failures', 'steps', 'events', 'conversation_claims',
        'history_exports', 'reviews', 'review_findings', 'review_digests', 'token_memo',
        'model_calls', 'token_calibrations', 'mcp_approvals'
    ] LOOP
        EXECUTE format(
            'CREATE TRIGGER %I BEFORE INSERT OR UPDATE OR DELETE ON %I '
            'FOR EACH STATEMENT EXECUTE FUNCTION decima_check_fence()',
            fenced || '_fence', fenced);
    END LOOP;
END;
$$;
