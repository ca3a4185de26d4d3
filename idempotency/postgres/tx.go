package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/sqlretry"
)

// Tx runs fn at most once per key, in a transaction that also completes the
// key and stores fn's result: the effect and the key's completion commit
// together or not at all, so a crash between them leaves neither, and a
// later call with the key either replays the stored result (Result.Replay)
// or runs fn again — never both, never twice.
//
// The call claims key (one statement, outside the transaction), then runs
// the transaction through sqlretry.PgxTx with r and opts: fn, then the
// completion, then COMMIT, the whole transaction retried on a serialization
// failure or a deadlock. A call that finds the key completed returns the
// stored result in that one statement; one that finds it claimed by another
// call waits (polling, 10ms doubling to idempotency.DefaultPollInterval)
// until it completes, or until its lease (WithLease) runs out and this call
// takes the key over, or until ctx ends (idempotency.ErrInProgress).
//
// The transaction carries key as its idempotency key (retry.WithIdempotencyKey),
// so an ambiguous COMMIT is retried: the retry finds the key completed by
// this call's own token if the COMMIT had succeeded, rolls its repeat back
// and returns the stored result as this execution's.
//
// When fn or the transaction fails, the claim is released and the error is
// returned (sqlretry's, usually a *retry.Error); the key can be used again
// at once. A result larger than idempotency.DefaultMaxResultSize is
// returned to this caller and stored as NotRetained. The same key with
// another fingerprint is idempotency.ErrKeyReuse. A bad key, a nil argument
// or a Store not made by New is a *retry.InvalidError, and nothing runs.
func (s *Store) Tx(ctx context.Context, r *retry.Retrier, opts pgx.TxOptions, key string, fp idempotency.Fingerprint,
	fn func(context.Context, pgx.Tx) ([]byte, error)) (idempotency.Result, error) {
	if err := s.checkTx(ctx, r, key, fn); err != nil {
		return idempotency.Result{}, err
	}
	skey := idempotency.StoreKey{Key: key}
	claim := idempotency.Record{Status: idempotency.InProgress, Token: rand.Text(), Fingerprint: fp}
	for n := 1; ; n++ {
		rec, claimed, err := s.Claim(ctx, skey, claim, s.cfg.lease)
		switch {
		case err != nil:
			return idempotency.Result{}, classify.Retryable(&idempotency.Error{Reason: idempotency.ErrStore, Key: key, Err: err})
		case claimed:
			return s.execute(ctx, r, opts, skey, claim, fn)
		case rec.Status != idempotency.InProgress || rec.Fingerprint != fp:
			return settled(key, rec, fp)
		}
		if err := sleep(ctx, pollDelay(n)); err != nil {
			return idempotency.Result{}, classify.Retryable(&idempotency.Error{Reason: idempotency.ErrInProgress, Key: key, Execution: rec.Token, Err: err})
		}
	}
}

func (s *Store) checkTx(ctx context.Context, r *retry.Retrier, key string, fn func(context.Context, pgx.Tx) ([]byte, error)) error {
	if err := s.ready(ctx, "Tx"); err != nil {
		return err
	}
	switch {
	case r == nil:
		return argerr.New("postgres.Store.Tx", nil, "the Retrier must not be nil (build one with retry.New)")
	case fn == nil:
		return argerr.New("postgres.Store.Tx", nil, "fn must not be nil")
	}
	return idempotency.ValidateKey(key)
}

// execute runs the transaction of the call that holds the claim.
func (s *Store) execute(ctx context.Context, r *retry.Retrier, opts pgx.TxOptions, key idempotency.StoreKey,
	claim idempotency.Record, fn func(context.Context, pgx.Tx) ([]byte, error)) (idempotency.Result, error) {
	defer func() {
		if p := recover(); p != nil {
			s.release(ctx, key, claim.Token) // the transaction rolled back: free the key, then go on panicking
			panic(p)
		}
	}()
	kctx, err := retry.WithIdempotencyKey(ctx, key.Key)
	if err != nil {
		return idempotency.Result{}, err
	}
	var value []byte
	attempts := 0
	_, err = sqlretry.PgxTx(kctx, r, s.pool, opts, func(ctx context.Context, tx pgx.Tx) error {
		if attempts++; attempts > 1 {
			// An earlier attempt may have committed (an ambiguous COMMIT is
			// retried for keyed work): then its effect must not run again.
			if err := s.notDone(ctx, tx, key, claim.Token); err != nil {
				return err
			}
		}
		v, err := fn(ctx, tx)
		if err == nil {
			value, err = v, s.completeIn(ctx, tx, key, claim, v)
		}
		return err
	})
	var done *doneError
	switch {
	case err == nil:
		return idempotency.Result{Value: value, Execution: claim.Token}, nil
	case errors.As(err, &done):
		return idempotency.Result{Value: done.rec.Value, Execution: claim.Token}, nil
	}
	s.release(ctx, key, claim.Token)
	return idempotency.Result{}, err
}

// completeIn completes the claim in tx, with fn's value v.
func (s *Store) completeIn(ctx context.Context, tx pgx.Tx, key idempotency.StoreKey, claim idempotency.Record, v []byte) error {
	rec := idempotency.Record{Status: idempotency.Succeeded, Token: claim.Token, Fingerprint: claim.Fingerprint, Value: v}
	if len(v) > s.cfg.maxResult {
		rec.Status, rec.Value = idempotency.NotRetained, nil
	}
	tag, err := s.complete(ctx, tx, key, rec, s.cfg.retention)
	if err != nil || tag.RowsAffected() == 1 {
		return err
	}
	return s.whyNotCompleted(ctx, tx, key, claim.Token)
}

// whyNotCompleted explains a completion that changed no row: either an
// earlier attempt of this call did commit, or the claim was lost to another
// call.
func (s *Store) whyNotCompleted(ctx context.Context, tx pgx.Tx, key idempotency.StoreKey, token string) error {
	if err := s.notDone(ctx, tx, key, token); err != nil {
		return err
	}
	return classify.Permanent(&idempotency.Error{Reason: idempotency.ErrClaimLost, Key: key.Key, Execution: token})
}

// notDone returns a *doneError if key holds the final record of token: an
// earlier attempt of this call committed.
func (s *Store) notDone(ctx context.Context, tx pgx.Tx, key idempotency.StoreKey, token string) error {
	var got row
	err := tx.QueryRow(ctx, s.sql.lookup, []byte(key.Scope), []byte(key.Key)).Scan(&got.status, &got.token, &got.fp, &got.value)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	rec, err := got.decode()
	if err == nil && rec.Token == token && rec.Status.Final() {
		return classify.Permanent(&doneError{rec})
	}
	return err
}

// doneError stops the retry of a transaction whose earlier attempt
// committed; the repeat rolls back, and the call returns rec's result.
type doneError struct{ rec idempotency.Record }

func (e *doneError) Error() string { return "idempotency/postgres: an earlier attempt committed" }

// release frees the claim after a failure, even if ctx has ended: a key
// left claimed waits for its lease. Being fenced, it cannot free another
// call's claim or undo a completion.
func (s *Store) release(ctx context.Context, key idempotency.StoreKey, token string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = s.Release(ctx, key, token)
}

// settled answers from a record this call did not claim: a finished one, or
// a claim with another fingerprint (as idempotency.Do does).
func settled(key string, rec idempotency.Record, fp idempotency.Fingerprint) (idempotency.Result, error) {
	if rec.Fingerprint != fp {
		return idempotency.Result{}, classify.Permanent(&idempotency.Error{Reason: idempotency.ErrKeyReuse, Key: key, Execution: rec.Token})
	}
	switch rec.Status {
	case idempotency.Succeeded:
		return idempotency.Result{Value: rec.Value, Execution: rec.Token, Replay: true, ReplayOf: rec.Token}, nil
	case idempotency.NotRetained:
		return idempotency.Result{}, classify.Permanent(&idempotency.Error{Reason: idempotency.ErrNotRetained, Key: key, Execution: rec.Token})
	case idempotency.Failed:
		return idempotency.Result{}, classify.Permanent(&idempotency.Error{Reason: idempotency.ErrStoredFailure, Key: key, Execution: rec.Token, Err: errors.New(string(rec.Value))})
	}
	return idempotency.Result{}, &idempotency.Error{Reason: idempotency.ErrStore, Key: key, Err: fmt.Errorf("unexpected record with status %v", rec.Status)}
}

// pollDelay is the n-th wait for a key in progress: 10ms doubling up to
// idempotency.DefaultPollInterval.
func pollDelay(n int) time.Duration {
	d := 10 * time.Millisecond
	for i := 1; i < n && d < idempotency.DefaultPollInterval; i++ {
		d *= 2
	}
	return min(d, idempotency.DefaultPollInterval)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
