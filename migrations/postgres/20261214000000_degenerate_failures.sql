-- A failure class of its own for an answer the model did not stop repeating: see the SQLite
-- migration of the same name.
ALTER TABLE failures DROP CONSTRAINT failures_class_check;
ALTER TABLE failures ADD CONSTRAINT failures_class_check
    CHECK (class IN ('transient', 'data', 'logic', 'permission', 'system',
                     'context_overflow', 'cancelled', 'degenerate'));
