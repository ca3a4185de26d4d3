package postgres_test

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/postgres"
)

// readmePay is the README's idempotency/postgres snippet, compiled here: the
// root module's README test cannot import this nested module, and checks
// that the snippet is in this file line for line.
func readmePay(ctx context.Context, pool *pgxpool.Pool, r *retry.Retrier, key string) error {
	store, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		return err
	}
	if err := store.Migrate(ctx); err != nil { // CREATE TABLE IF NOT EXISTS retry_idempotency …
		return err
	}
	fp := idempotency.NewFingerprint([]byte("pay 42 from 7 to 9"))
	res, err := store.Tx(ctx, r, pgx.TxOptions{IsoLevel: pgx.Serializable}, key, fp,
		func(ctx context.Context, tx pgx.Tx) ([]byte, error) {
			_, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance - 42 WHERE id = 7`)
			return []byte("receipt 8f3a"), err
		})
	if err != nil {
		return err
	}
	// res.Replay: an earlier call with key committed; res.Value is its receipt
	_ = res
	return nil
}

var _ = readmePay
