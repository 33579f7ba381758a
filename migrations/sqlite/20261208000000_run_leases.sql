-- Runs that survive their machine (see migrations/postgres/20261208000000_run_leases.sql).
-- A SQLite file lives on one machine, where the kernel's lock on a file per execution already
-- says who runs it and lapses the moment its process dies: nothing to add here. The version
-- exists so that both schemas end at the same one.
SELECT 1;
