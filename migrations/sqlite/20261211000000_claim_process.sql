-- A claim names its holder's process well enough to tell, from the same machine, that it is
-- gone. A chat turn killed with SIGKILL left its claim for up to a minute (its time to live),
-- with the conversation refused as busy by a process that no longer existed.
--
-- * pid: the holder's process id;
-- * boot_id: the machine's boot id and the holder's pid namespace, as the holder read them
--   (NULL where its system has none: such a claim is never judged, it lapses);
-- * start_time: when the holder started, in the kernel's clock ticks since boot, so a pid
--   reused by another process is not taken for the holder.
--
-- A claimant on the same boot whose kernel has no process with that pid, or one started at
-- another time, takes the claim over at once, in the transaction that finds it. The columns
-- are nullable: rows an older Decima wrote still read, and lapse as before.
ALTER TABLE conversation_claims ADD COLUMN pid INTEGER CHECK (pid IS NULL OR pid > 0);
ALTER TABLE conversation_claims ADD COLUMN boot_id TEXT;
ALTER TABLE conversation_claims ADD COLUMN start_time INTEGER CHECK (start_time IS NULL OR start_time >= 0);
