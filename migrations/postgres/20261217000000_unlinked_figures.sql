-- A failure class for an answer whose figures no tool output holds, its four answers, and the
-- analyst's decision on each figure: see the SQLite migration of the same name.
ALTER TABLE failures DROP CONSTRAINT failures_class_check;
ALTER TABLE failures ADD CONSTRAINT failures_class_check
    CHECK (class IN ('transient', 'data', 'logic', 'permission', 'system',
                     'context_overflow', 'cancelled', 'degenerate', 'unlinked'));
ALTER TABLE failures DROP CONSTRAINT failures_resolution_check;
ALTER TABLE failures ADD CONSTRAINT failures_resolution_check
    CHECK (resolution IS NULL OR resolution IN ('retry', 'skip', 'replan', 'abort', 'rollback',
                                                'compress', 'verify', 'estimate', 'correct',
                                                'accept'));

CREATE TABLE figure_decisions (
    conversation_id  TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    message_seq      BIGINT NOT NULL,
    start            BIGINT NOT NULL,
    text             TEXT NOT NULL,
    decision         TEXT NOT NULL CHECK (decision IN ('verify', 'estimate', 'correct', 'accept')),
    value            TEXT,
    failure_id       TEXT,
    decided_at       BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, message_seq, start)
);
