-- A decision on a figure of a report the run wrote (`report.md`), not only of its answer: the
-- figure is named by the report's workspace path beside the answer's seq and its offset in the
-- report. `path` is '' for a figure of the answer itself.
ALTER TABLE figure_decisions ADD COLUMN path TEXT NOT NULL DEFAULT '';
ALTER TABLE figure_decisions DROP CONSTRAINT figure_decisions_pkey;
ALTER TABLE figure_decisions ADD PRIMARY KEY (conversation_id, message_seq, path, start);
