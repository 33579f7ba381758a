-- A claim names its holder's process well enough to tell, from the same machine, that it is
-- gone (see migrations/sqlite/20261211000000_claim_process.sql): its pid, the machine's boot id
-- with the holder's pid namespace, and its start time in clock ticks since boot. All nullable,
-- so rows an older Decima wrote still read, and lapse by their time to live as before.
ALTER TABLE conversation_claims
    ADD COLUMN pid BIGINT CHECK (pid IS NULL OR pid > 0),
    ADD COLUMN boot_id TEXT,
    ADD COLUMN start_time BIGINT CHECK (start_time IS NULL OR start_time >= 0);

-- A run's lease names its holder the same way: a runner killed on this machine frees its run at
-- once for a process on the same boot, instead of after the lease's time to live. A lease held
-- from another machine still lapses by the server's clock.
ALTER TABLE execution_leases
    ADD COLUMN pid BIGINT CHECK (pid IS NULL OR pid > 0),
    ADD COLUMN boot_id TEXT,
    ADD COLUMN start_time BIGINT CHECK (start_time IS NULL OR start_time >= 0);
