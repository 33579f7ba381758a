-- The tenth man recomputes: a snapshot as each run starts, a review type `recompute`, and a
-- receipt per recomputed figure. See the SQLite migration of the same name.
ALTER TABLE snapshots DROP CONSTRAINT snapshots_reason_check;
ALTER TABLE snapshots ADD CONSTRAINT snapshots_reason_check
    CHECK (reason IN ('run_start', 'todo_start', 'checkpoint', 'manual'));
ALTER TABLE reviews DROP CONSTRAINT reviews_review_type_check;
ALTER TABLE reviews ADD CONSTRAINT reviews_review_type_check
    CHECK (review_type IN ('quick', 'full', 'recompute'));

CREATE TABLE figure_receipts (
    conversation_id  TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    message_seq      BIGINT NOT NULL,
    start            BIGINT NOT NULL,
    review_id        TEXT NOT NULL REFERENCES reviews (id),
    text             TEXT NOT NULL,
    recomputed       TEXT,
    agrees           BOOLEAN NOT NULL,
    derivation       TEXT NOT NULL,
    code             TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, message_seq, start, review_id)
);
