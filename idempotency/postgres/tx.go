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
	"github.com/retrykit/retry/sqlretry"
)

// Tx runs fn at most once per key, in a transaction that also records the
// key's completion and fn's result: the effect and the record commit
// together or not at all, so a crash between them leaves neither, and a
// later call with the key either replays the stored result (Result.Replay)
// or runs fn again — never both, never twice.
//
// The call first looks the key up (one statement). A completed key is
// replayed from that statement alone. Otherwise Tx runs the transaction
// through sqlretry.PgxTx with r and opts: fn, then an INSERT of the
// completed record, then COMMIT, the whole transaction retried on a
// serialization failure or a deadlock. No claim is written before the
// transaction: a concurrent call with the same key may run fn too, but its
// INSERT waits for the first transaction and then fails (a serialization
// failure, or a conflict under READ COMMITTED), so its effect rolls back
// and it returns the first one's result as a replay. A key claimed through
// the Store interface (idempotency.Do) is waited for, polling, at most
// Config.MaxWait (30s by default): then Tx returns the retryable
// idempotency.ErrInProgress, and fn has not run.
//
// The transaction carries key as its idempotency key (retry.WithIdempotencyKey),
// so an ambiguous COMMIT is retried: every attempt after the first looks the
// key up first, and finds it completed if the earlier COMMIT did succeed —
// then it runs nothing and returns the stored result as this execution's.
// If r does not retry it (attempts or time run out), Tx looks the key up
// once more and tells its own completion (its execution's token) from
// another call's: its own is this execution's result, never a replay.
//
// When fn or the transaction fails, the error is returned (sqlretry's,
// usually a *retry.Error) and nothing is recorded: the next call with the
// key runs fn again. A result larger than 1 MiB is returned to this caller
// and recorded as NotRetained. The same key with
// another fingerprint is idempotency.ErrKeyReuse. A bad key, a nil argument
// or a Store not made by New is a *retry.InvalidError, and nothing runs.
func (s *Store) Tx(ctx context.Context, r *retry.Retrier, opts pgx.TxOptions, key string, fp idempotency.Fingerprint,
	fn func(context.Context, pgx.Tx) ([]byte, error)) (idempotency.Result, error) {
	if err := s.checkTx(ctx, r, key, fn); err != nil {
		return idempotency.Result{}, err
	}
	skey := idempotency.StoreKey{Key: key}
	token := rand.Text()
	var last []byte // fn's value in this call, if it ran
	w := waiting{max: s.cfg.MaxWait}
	defer w.stop()
	for {
		rec, found, err := s.lookup(ctx, s.pool, skey)
		switch {
		case err != nil:
			return idempotency.Result{}, classify.Retryable(&idempotency.Error{Reason: idempotency.ErrStore, Key: key, Err: err})
		case !found:
			v, err := s.execute(ctx, r, opts, skey, idempotency.Record{Token: token, Fingerprint: fp}, fn)
			if err == nil {
				return idempotency.Result{Value: v, Execution: token}, nil
			}
			if !s.taken(ctx, skey, err) {
				return idempotency.Result{}, err
			}
			last = v
			continue // completed since: by another call, or by this one's COMMIT whose reply was lost
		case rec.Token == token:
			return own(rec, last), nil
		case rec.Status != idempotency.InProgress || rec.Fingerprint != fp:
			return settled(key, rec, fp)
		}
		if err := w.wait(ctx); err != nil {
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
		return invalid("postgres.Store.Tx", nil, "the Retrier must not be nil (build one with retry.New)")
	case fn == nil:
		return invalid("postgres.Store.Tx", nil, "fn must not be nil")
	}
	return idempotency.ValidateKey(key)
}

// taken reports whether the transaction failed because another call took
// the key: it says so (errTaken), or its effect failed on what the other's
// did (a unique key, say), and the key is now recorded.
func (s *Store) taken(ctx context.Context, key idempotency.StoreKey, err error) bool {
	if errors.Is(err, errTaken) {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	_, found, lerr := s.lookup(ctx, s.pool, key)
	return lerr == nil && found
}

// errTaken: the key was completed or claimed by another call while this
// one's transaction ran; it rolled back.
var errTaken = errors.New("idempotency/postgres: the key was taken by another call")

// execute runs the transaction: fn and the record of its completion. It
// returns the value of fn's last run, the one that committed if any did,
// even with an error: a COMMIT whose reply was lost may have committed it.
func (s *Store) execute(ctx context.Context, r *retry.Retrier, opts pgx.TxOptions, key idempotency.StoreKey,
	mine idempotency.Record, fn func(context.Context, pgx.Tx) ([]byte, error)) ([]byte, error) {
	kctx, err := retry.WithIdempotencyKey(ctx, key.Key)
	if err != nil {
		return nil, err
	}
	var value []byte
	attempts := 0
	_, err = sqlretry.PgxTx(kctx, r, s.pool, opts, func(ctx context.Context, tx pgx.Tx) error {
		if attempts++; attempts > 1 {
			// An earlier attempt may have committed (an ambiguous COMMIT is
			// retried for keyed work), or another call completed the key.
			if err := s.notDone(ctx, tx, key); err != nil {
				return err
			}
		}
		v, err := fn(ctx, tx)
		if err == nil {
			value, err = v, s.record(ctx, tx, key, mine, v)
		}
		return err
	})
	var done *doneError
	switch {
	case err == nil, errors.As(err, &done) && done.rec.Token == mine.Token:
		return value, nil // an earlier attempt's COMMIT did commit: value is its
	case errors.As(err, &done):
		return value, errTaken
	}
	return value, err
}

// record inserts the completed record of key in tx, with fn's value v. A
// live record in the way (another call's, committed since this transaction
// began under READ COMMITTED) rolls the transaction back; under REPEATABLE
// READ and SERIALIZABLE the INSERT fails with a serialization failure
// instead, and the retry finds the record first.
func (s *Store) record(ctx context.Context, tx pgx.Tx, key idempotency.StoreKey, mine idempotency.Record, v []byte) error {
	rec := idempotency.Record{Status: idempotency.Succeeded, Token: mine.Token, Fingerprint: mine.Fingerprint, Value: v}
	if len(v) > maxResult {
		rec.Status, rec.Value = idempotency.NotRetained, nil
	}
	if rec.Value == nil {
		rec.Value = []byte{}
	}
	tag, err := tx.Exec(ctx, s.sql.insert, []byte(key.Scope), []byte(key.Key), int16(rec.Status), []byte(rec.Token),
		rec.Fingerprint[:], rec.Value, s.cfg.Retention.Microseconds())
	if err != nil || tag.RowsAffected() == 1 {
		return err
	}
	return classify.Permanent(errTaken)
}

// lookup reads the live record of key, if any.
func (s *Store) lookup(ctx context.Context, db querier, key idempotency.StoreKey) (idempotency.Record, bool, error) {
	var got row
	err := db.QueryRow(ctx, s.sql.lookup, []byte(key.Scope), []byte(key.Key)).Scan(&got.status, &got.token, &got.fp, &got.value)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return idempotency.Record{}, false, nil
	case err != nil:
		return idempotency.Record{}, false, err
	}
	rec, err := got.decode()
	return rec, err == nil, err
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// notDone returns a *doneError if key holds a final record, and errTaken if
// another call claims it.
func (s *Store) notDone(ctx context.Context, tx pgx.Tx, key idempotency.StoreKey) error {
	rec, found, err := s.lookup(ctx, tx, key)
	switch {
	case err != nil || !found:
		return err
	case rec.Status.Final():
		return classify.Permanent(&doneError{rec})
	}
	return classify.Permanent(errTaken)
}

// doneError stops the retry of a transaction whose key is already
// completed: by an earlier attempt of this call, or by another call.
type doneError struct{ rec idempotency.Record }

func (e *doneError) Error() string { return "idempotency/postgres: the key is already completed" }

// own answers from the record of this call's own execution, found after its
// COMMIT's reply was lost: fn ran in this call, so the result is not a
// replay. v is fn's value, the only copy of one too large to be kept.
func own(rec idempotency.Record, v []byte) idempotency.Result {
	if rec.Status == idempotency.Succeeded {
		v = rec.Value
	}
	return idempotency.Result{Value: v, Execution: rec.Token}
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

// waiting is Tx's wait for a key in progress: polls, 10ms doubling up to
// 500ms as idempotency.Do polls by default, all of them within max.
type waiting struct {
	max    time.Duration
	n      int
	ctx    context.Context // ends max after the first wait began
	cancel context.CancelFunc
}

var errMaxWait = errors.New("waited longer than postgres.Config.MaxWait")

// wait sleeps until the next poll, or returns the cause of the end of ctx or
// of max.
func (w *waiting) wait(ctx context.Context) error {
	if w.n++; w.ctx == nil {
		w.ctx, w.cancel = context.WithTimeoutCause(ctx, w.max, errMaxWait)
	}
	return sleep(w.ctx, pollDelay(w.n))
}

func (w *waiting) stop() {
	if w.cancel != nil {
		w.cancel()
	}
}

// pollDelay is the n-th wait for a key in progress: 10ms doubling up to
// 500ms, as idempotency.Do polls by default.
func pollDelay(n int) time.Duration {
	d := 10 * time.Millisecond
	for i := 1; i < n && d < maxPoll; i++ {
		d *= 2
	}
	return min(d, maxPoll)
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
