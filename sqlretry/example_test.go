package sqlretry_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/sqlretry"
)

// A transfer under SERIALIZABLE: a serialization failure begins the
// transaction again; a COMMIT lost with its connection is reported, not
// repeated, because the call carries no idempotency key. (It needs a
// database, so it is compiled, not run.)
func ExamplePgxTx() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://localhost/bank")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	r, err := retry.New(retry.WithMaxAttempts(10))
	if err != nil {
		log.Fatal(err)
	}
	st, err := sqlretry.PgxTx(ctx, r, pool, pgx.TxOptions{IsoLevel: pgx.Serializable},
		func(ctx context.Context, tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance - 10 WHERE id = 1`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance + 10 WHERE id = 2`)
			return err
		})
	switch {
	case errors.Is(err, sqlretry.ErrAmbiguousCommit):
		fmt.Println("the transfer may or may not have happened: look before trying again")
	case err != nil:
		fmt.Println("transfer failed:", err)
	default:
		fmt.Println("transferred in", st.Attempts, "attempt(s)")
	}
}
