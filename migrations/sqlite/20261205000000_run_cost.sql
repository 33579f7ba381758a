-- What each model call cost, estimated when it was answered from the provider's prices (US
-- dollars per million tokens, in the provider's settings) and the usage it reported, in
-- millionths of a dollar so that sums are exact. NULL where the provider has no prices or
-- reported no usage. A run's sum stays on `executions`: NULL until a priced call, so "no
-- estimate" is never shown as "free".
ALTER TABLE model_calls ADD COLUMN cost_microdollars INTEGER CHECK (cost_microdollars >= 0);
ALTER TABLE executions ADD COLUMN cost_microdollars INTEGER CHECK (cost_microdollars >= 0);

DROP TRIGGER model_calls_sum;
CREATE TRIGGER model_calls_sum AFTER INSERT ON model_calls
BEGIN
    UPDATE executions
    SET model_calls = model_calls + 1,
        tokens_in = tokens_in + coalesce(NEW.tokens_in, 0),
        tokens_out = tokens_out + coalesce(NEW.tokens_out, 0),
        cache_read_tokens = cache_read_tokens + coalesce(NEW.cache_read_tokens, 0),
        cache_write_tokens = cache_write_tokens + coalesce(NEW.cache_write_tokens, 0),
        cost_microdollars = CASE
            WHEN NEW.cost_microdollars IS NULL THEN cost_microdollars
            ELSE coalesce(cost_microdollars, 0) + NEW.cost_microdollars
        END
    WHERE id = NEW.execution_id;
END;
