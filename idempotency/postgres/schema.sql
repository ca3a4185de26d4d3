-- The table of github.com/retrykit/retry/idempotency/postgres: one row per
-- idempotency key (within a scope), holding its record. Migrate applies this
-- file with the table name the Store was given (Config.Table, quoted) in place
-- of the default one. Every statement is idempotent: applying it twice is
-- harmless.
CREATE TABLE IF NOT EXISTS retry_idempotency (
    -- The key's scope and the key, as bytes: a key is any string, NUL
    -- bytes and invalid UTF-8 included.
    scope       bytea       NOT NULL,
    key         bytea       NOT NULL,
    -- idempotency.Status: 1 in progress, 2 succeeded, 3 failed, 4 not retained.
    status      smallint    NOT NULL,
    -- The execution that claimed the key; it fences the claim.
    token       bytea       NOT NULL,
    -- The request's idempotency.Fingerprint (32 bytes).
    fingerprint bytea       NOT NULL,
    -- The result (succeeded) or the failure (failed); empty otherwise.
    value       bytea       NOT NULL DEFAULT '',
    -- The end of the claim's lease, or of the record's retention.
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);
-- For DeleteExpired, which deletes what expired, oldest first.
CREATE INDEX IF NOT EXISTS retry_idempotency_expires_at ON retry_idempotency (expires_at);
