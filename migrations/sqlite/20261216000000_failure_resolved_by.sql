-- Who answered a failure: the analyst, or the run itself (a logic failure's one automatic
-- replan). The conversation said "You chose: Replan" for a replan nobody chose.
ALTER TABLE failures ADD COLUMN resolved_by TEXT
    CHECK (resolved_by IS NULL OR resolved_by IN ('analyst', 'automatic'));
-- Earlier answers: the automatic replans are the ones the run logged as such.
UPDATE failures SET resolved_by = CASE
    WHEN id IN (SELECT json_extract(payload, '$.failure_id') FROM events
                WHERE kind = 'failure.auto_replan') THEN 'automatic'
    ELSE 'analyst' END
WHERE resolution IS NOT NULL;
