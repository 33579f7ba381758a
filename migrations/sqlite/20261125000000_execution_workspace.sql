-- The agent loop (issue 9): where an execution's tools run and the options it was started with,
-- so `decima resume` and `decima recover` continue it as it was begun. Both are added columns:
-- every existing row keeps its values, and older executions read as "no workspace recorded".
ALTER TABLE executions ADD COLUMN workspace TEXT;
ALTER TABLE executions ADD COLUMN options TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(options));
