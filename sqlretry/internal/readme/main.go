package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/sqlretry"
)

func main() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL")) // a database with a table accounts(id, balance)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	r, err := retry.New(retry.Strict(), retry.WithMaxAttempts(10)) // Strict: your own errors are not retried
	if err != nil {
		log.Fatal(err)
	}
	// Serialization failures and deadlocks retry from BEGIN; sqlretry.Tx does the same for database/sql.
	st, err := sqlretry.PgxTx(ctx, r, pool, pgx.TxOptions{IsoLevel: pgx.Serializable},
		func(ctx context.Context, tx pgx.Tx) error { // may run again: do everything through tx
			_, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance - 10 WHERE id = 1;
				UPDATE accounts SET balance = balance + 10 WHERE id = 2`)
			return err
		})
	if err != nil {
		log.Fatal(err) // errors.Is(err, sqlretry.ErrAmbiguousCommit): COMMIT sent, connection lost; look before redoing
	}
	fmt.Println("committed after", st.Attempts, "attempt(s)")
}
