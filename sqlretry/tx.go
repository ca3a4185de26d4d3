package sqlretry

import (
	"context"
	"errors"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
)

// ErrAmbiguousCommit is matched (errors.Is) by the error of a transaction
// whose COMMIT was sent and then lost with its connection: the server may
// have committed it or not, and nothing the client holds can tell which.
var ErrAmbiguousCommit = errors.New("sqlretry: ambiguous commit: the connection was lost during COMMIT, " +
	"so the transaction may or may not have committed")

// ambiguousError wraps the error that COMMIT returned.
type ambiguousError struct{ err error }

func (e *ambiguousError) Error() string        { return ErrAmbiguousCommit.Error() + ": " + e.err.Error() }
func (e *ambiguousError) Unwrap() error        { return e.err }
func (e *ambiguousError) Is(target error) bool { return target == ErrAmbiguousCommit }

// ambiguous is how the retry loop sees an ambiguous commit: a timeout after
// which the work may have been done, retried only when it is idempotent or
// keyed. The marker wins over whatever the wrapped error says (a reset
// connection alone would be retried without that caution).
var ambiguous = classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonAmbiguousCommit, Timeout: true}

// txn is one attempt's transaction, whatever the driver.
type txn[T any] struct {
	tx       T
	commit   func(context.Context) error
	rollback func(context.Context) error
}

// run retries whole transactions: each attempt begins one, runs fn in it and
// commits it.
func run[T any](ctx context.Context, r *retry.Retrier, begin func(context.Context) (txn[T], error),
	fn func(context.Context, T) error) (retry.Stats, error) {
	return r.Run(ctx, func(actx context.Context) error {
		err := attempt(actx, begin, fn)
		var early *earlyError
		if errors.As(err, &early) {
			return beforeCommit(ctx, early.err)
		}
		return err
	})
}

// attempt runs one transaction. A panic in fn rolls it back and goes on up.
// A failure before COMMIT comes back as an *earlyError.
func attempt[T any](ctx context.Context, begin func(context.Context) (txn[T], error),
	fn func(context.Context, T) error) error {
	t, err := begin(ctx)
	if err != nil {
		return &earlyError{err}
	}
	returned := false
	defer func() {
		if !returned {
			_ = t.rollback(ctx) // fn panicked; the panic goes on, the transaction does not
		}
	}()
	err = fn(ctx, t.tx)
	returned = true
	if err != nil {
		_ = t.rollback(ctx)
		return &earlyError{err}
	}
	return atCommit(t.commit(ctx))
}

// earlyError carries the error of an attempt that failed before COMMIT, to
// run, where the caller's context is known.
type earlyError struct{ err error }

func (e *earlyError) Error() string { return e.err.Error() }

// beforeCommit is the error of an attempt that failed before COMMIT was
// sent. Nothing of it committed: the server rolls back an open transaction
// whose session ends. So a failure the built-in table retries only as "may
// still be running" (a lost connection, an attempt's own timeout) is retried
// plainly. ctx is the caller's: when it has ended, the loop decides.
func beforeCommit(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	if d := classify.Default(err); d.Verdict == classify.Retry && d.Timeout {
		d.Timeout = false
		return classify.Mark(err, d)
	}
	return err
}

// atCommit is the error of COMMIT. An error the server sent (it carries a
// SQLSTATE that does not mean "connection lost") says the transaction did
// not commit, and is classified like any other; so is an error raised before
// anything was sent. Anything else leaves the outcome unknown.
func atCommit(err error) error {
	switch {
	case err == nil || answered(err):
		return err
	case notSent(err):
		return &earlyError{err} // nothing committed, as before COMMIT
	}
	return classify.Mark(&ambiguousError{err}, ambiguous)
}

// answered reports whether err is the server's answer to COMMIT.
func answered(err error) bool {
	var s interface{ SQLState() string }
	return errors.As(err, &s) && !classify.SQLState(s.SQLState()).Timeout
}

// notSent reports whether err was raised before COMMIT reached the wire:
// database/sql returns ErrTxDone or the context's error (having rolled back)
// when the context ended first, and PgxTx checks the context itself. pgx's
// SafeToRetry is not trusted here: when the reply to COMMIT is lost, pgx
// v5.12 reports "conn closed" with SafeToRetry() true, although COMMIT was
// sent (TestCommitReplyLostIsAmbiguous).
func notSent(err error) bool {
	var u unsent
	return errors.As(err, &u) || errors.Is(err, errTxDone) || errors.Is(err, errCommitRollback)
}

// unsent marks an error raised before COMMIT was sent.
type unsent struct{ error }

func (e unsent) Unwrap() error { return e.error }
