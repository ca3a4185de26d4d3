package postgres_test

import (
	"context"
	"fmt"
	"log"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/postgres"
)

// A payment made exactly once: the debit and the key's completion commit
// together, a serialization failure retries both, and a second call with the
// key replays the receipt. (It needs a database, so it is compiled, not run.)
func ExampleStore_Tx() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://localhost/shop")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	r, err := retry.New(retry.WithMaxAttempts(10))
	if err != nil {
		log.Fatal(err)
	}
	fp := idempotency.NewFingerprint([]byte("pay 42 from account 7"))
	res, err := store.Tx(ctx, r, pgx.TxOptions{IsoLevel: pgx.Serializable}, "payment-8f3a", fp,
		func(ctx context.Context, tx pgx.Tx) ([]byte, error) {
			_, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance - 42 WHERE id = 7`)
			return []byte("receipt 8f3a"), err
		})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s (replay: %v)\n", res.Value, res.Replay)
}
