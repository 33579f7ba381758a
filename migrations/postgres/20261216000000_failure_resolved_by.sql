-- Who answered a failure: see the SQLite migration of the same name.
ALTER TABLE failures ADD COLUMN resolved_by TEXT
    CHECK (resolved_by IS NULL OR resolved_by IN ('analyst', 'automatic'));
UPDATE failures SET resolved_by = CASE
    WHEN id IN (SELECT payload::json ->> 'failure_id' FROM events
                WHERE kind = 'failure.auto_replan') THEN 'automatic'
    ELSE 'analyst' END
WHERE resolution IS NOT NULL;
