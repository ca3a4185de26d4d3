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

// readmeTransfer is the README's sqlretry snippet, compiled here: the root
// module's README test cannot import this nested module, and checks that the
// snippet is in this file line for line.
func readmeTransfer(ctx context.Context, pool *pgxpool.Pool) error {
	r, err := retry.New(retry.Strict(), retry.WithMaxAttempts(10))
	if err != nil {
		return err
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
		// COMMIT was sent and the connection lost: look before doing it again
	case err != nil:
		log.Print(err)
	default:
		fmt.Println("committed after", st.Attempts, "attempt(s)")
	}
	return err
}

var _ = readmeTransfer
