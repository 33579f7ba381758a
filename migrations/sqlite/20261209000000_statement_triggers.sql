-- Bulk writes (see migrations/postgres/20261209000000_statement_triggers.sql): PostgreSQL's row
-- triggers on messages became statement triggers, because each update of a conversation's row
-- left a version the next update had to walk past. SQLite updates the row in place, so its
-- row triggers stay. The version exists so that both schemas end at the same one.
SELECT 1;
