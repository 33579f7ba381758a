-- Bulk writes index their messages in one statement on SQLite (see
-- migrations/sqlite/20261210000000_bulk_search_index.sql). PostgreSQL's GIN trigram index is
-- kept by the table itself, with no trigger. The version exists so that both schemas end at the
-- same one.
SELECT 1;
