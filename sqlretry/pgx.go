package sqlretry

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retrykit/retry"
)

// errCommitRollback is what pgx's Commit returns when the server answered
// COMMIT with ROLLBACK (fn swallowed an error that aborted the transaction):
// nothing was committed.
var errCommitRollback = pgx.ErrTxCommitRollback

// PgxTx is Tx for a pgx pool: it runs fn in a transaction begun with opts
// (the zero value: the server's defaults; set IsoLevel to choose the level)
// and retries the whole transaction through r, as Tx does.
func PgxTx(ctx context.Context, r *retry.Retrier, pool *pgxpool.Pool, opts pgx.TxOptions,
	fn func(context.Context, pgx.Tx) error) (retry.Stats, error) {
	if err := check("sqlretry.PgxTx", ctx, r, pool == nil, fn == nil); err != nil {
		return retry.Stats{}, err
	}
	begin := func(ctx context.Context) (txn[pgx.Tx], error) {
		tx, err := pool.BeginTx(ctx, opts)
		if err != nil {
			return txn[pgx.Tx]{}, err
		}
		return txn[pgx.Tx]{tx: tx, commit: func(ctx context.Context) error { return pgxCommit(ctx, tx) }, rollback: tx.Rollback}, nil
	}
	return run(ctx, r, begin, fn)
}

// pgxCommit commits tx unless ctx has ended, in which case it rolls back
// and says that COMMIT was not sent.
func pgxCommit(ctx context.Context, tx pgx.Tx) error {
	if err := ctx.Err(); err != nil {
		_ = tx.Rollback(ctx)
		return unsent{err}
	}
	return tx.Commit(ctx)
}
