package sqlretry

import (
	"context"
	"database/sql"
	"errors"

	"github.com/retrykit/retry"
)

// errTxDone is what database/sql's Commit returns for a transaction it
// already rolled back (its context ended): nothing was committed.
var errTxDone = sql.ErrTxDone

// Tx runs fn in a database/sql transaction and retries the whole
// transaction, from BEGIN, through r. Each attempt begins a transaction with
// opts (nil: the driver's defaults; set Isolation to choose the level), calls
// fn with the attempt's context and transaction, and commits if fn returns
// nil or rolls back if it returns an error or panics (the panic goes on).
//
// Errors are classified by r (see the package documentation for what
// changes before and at COMMIT). A COMMIT lost with its connection returns an
// error matching ErrAmbiguousCommit, and is retried only if r is
// retry.Idempotent() or ctx carries retry.WithIdempotencyKey.
//
// fn may run more than once: it must do nothing outside tx that cannot be
// repeated.
func Tx(ctx context.Context, r *retry.Retrier, db *sql.DB, opts *sql.TxOptions,
	fn func(context.Context, *sql.Tx) error) (retry.Stats, error) {
	if err := check("sqlretry.Tx", ctx, r, db == nil, fn == nil); err != nil {
		return retry.Stats{}, err
	}
	begin := func(ctx context.Context) (txn[*sql.Tx], error) {
		tx, err := db.BeginTx(ctx, opts)
		if err != nil {
			return txn[*sql.Tx]{}, err
		}
		return txn[*sql.Tx]{
			tx:       tx,
			commit:   func(ctx context.Context) error { return stdCommit(ctx, tx) },
			rollback: func(context.Context) error { return tx.Rollback() },
		}, nil
	}
	return run(ctx, r, begin, fn)
}

// stdCommit commits tx. database/sql checks the transaction's context
// before it sends COMMIT and, when the context has ended, returns its error
// itself, having rolled back: nothing was sent.
func stdCommit(ctx context.Context, tx *sql.Tx) error {
	err := tx.Commit()
	if err != nil && err == ctx.Err() {
		return unsent{err}
	}
	return err
}

// check returns the first nil argument as a *retry.InvalidError.
func check(name string, ctx context.Context, r *retry.Retrier, noDB, noFn bool) error {
	switch {
	case ctx == nil:
		return invalid(name, nil, "the context must not be nil")
	case r == nil:
		return invalid(name, nil, "the Retrier must not be nil (build one with retry.New)")
	case noDB:
		return invalid(name, nil, "the database must not be nil")
	case noFn:
		return invalid(name, nil, "fn must not be nil")
	}
	return nil
}

// invalid returns the *retry.InvalidError for a bad argument or option:
// "name(value): reason".
func invalid(name string, value any, reason string) error {
	return &retry.InvalidError{Name: name, Value: value, Err: errors.New(reason)}
}
