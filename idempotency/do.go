package idempotency

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/argerr"
)

// Result is the outcome of an idempotent call that produced a value.
type Result struct {
	// Value is what fn returned: now (a fresh execution), or when the key was
	// first used (a replay).
	Value []byte
	// Execution is the id of the execution that produced Value: the one this
	// call ran, or, on a replay, the original one.
	Execution string
	// Replay reports that fn did not run for this call: Value is the stored
	// result of an earlier execution with the same key.
	Replay bool
	// ReplayOf is the id of the original execution when Replay is true (equal
	// to Execution), and "" otherwise: the one execution that did the work
	// and paid for it, to reconcile a replay with.
	ReplayOf string
}

// Do runs fn at most once per key within the key's retention window and
// returns its result, or the stored result of the execution that ran it
// first (Result.Replay, Result.ReplayOf).
//
// A call that finds the key held by an execution in progress waits for it
// (bounded by ctx and WithMaxWait) and returns its result; a store that
// implements Waiter wakes it at once, another is polled. If the execution in
// progress crashed, its claim expires after the lease and a waiting caller
// takes the key over and runs fn itself.
//
// The same key with a different fingerprint is ErrKeyReuse: never retried,
// and never answered by minting a new key. A result larger than the retention
// cap is returned to this caller and reported to later ones as
// ErrNotRetained. When fn fails, Do returns fn's error unchanged and, by
// default, releases the key so that a retry runs fn again; KeepFailures keeps
// the failure for the window instead (ErrStoredFailure).
//
// Do returns by ctx's deadline, or 25ms after it when the store is slow to
// record fn's outcome. The record is not lost: it goes on in the background
// for at most the lease, and Do returns what fn returned, as if it were
// recorded. A call with the key meanwhile finds it in progress, waits, and
// replays the record once it lands. If the store fails to record it, Do's
// observers (WithObserver) hear of it; the key is then held until the lease
// ends, and a later call may run fn again — as when a failure to record is
// returned, in the error next to fn's result, to a caller still waiting.
//
// The key is checked with ValidateKey; a bad key, a nil argument or a bad
// option is a *retry.InvalidError and nothing runs. Errors of the idempotency layer
// are *Error: ErrKeyReuse, ErrNotRetained and ErrStoredFailure are marked
// permanent for the retry loop (classify.Permanent), ErrInProgress retryable.
func Do(ctx context.Context, s Store, key string, fp Fingerprint, fn func(context.Context) ([]byte, error), opts ...Option) (Result, error) {
	c, err := newCallConfig(opts)
	if err == nil {
		err = checkCall("idempotency.Do", ctx, s, key, fn != nil)
	}
	if err != nil {
		return Result{}, err
	}
	return c.do(ctx, s, StoreKey{Key: key}, fp, func(ctx context.Context) (output, error) {
		v, err := fn(ctx)
		return output{value: v}, err
	})
}

// Once runs effect only if no earlier run with key succeeded — the
// "UPDATE … SET sent_at = now() WHERE id = ? AND sent_at IS NULL" pattern, on
// any Store — and reports whether this call ran it. Concurrent calls with
// the key wait for the one running; a failed run releases the key, so the
// next call runs the effect again (with KeepFailures, the failure is kept
// instead, and later calls get ErrStoredFailure without running). An earlier success is remembered for the
// retention window (24h by default): give a longer WithRetention where a
// repeat after that would still do harm.
//
// Between the effect's success and its record there is a moment where a
// crash loses the record (no store can make an outside effect and its record
// one transaction); a later run then repeats the effect.
func Once(ctx context.Context, s Store, key string, effect func(context.Context) error, opts ...Option) (ran bool, err error) {
	c, err := newCallConfig(opts)
	if err == nil {
		err = checkCall("idempotency.Once", ctx, s, key, effect != nil)
	}
	if err != nil {
		return false, err
	}
	res, err := c.do(ctx, s, StoreKey{Key: key}, Fingerprint{}, func(ctx context.Context) (output, error) {
		return output{}, effect(ctx)
	})
	return res.Execution != "" && !res.Replay, err
}

// callDefaults configures a call without options; it is never modified.
var callDefaults = config{execConfig: defaultExec(), poll: defaultPollInterval}

func newCallConfig(opts []Option) (*config, error) {
	if len(opts) == 0 {
		return &callDefaults, nil
	}
	c := callDefaults
	if err := c.apply(opts); err != nil {
		return nil, err
	}
	return &c, nil
}

// checkCall checks the arguments of Do or Once (fn is whether the function
// to run is not nil).
func checkCall(name string, ctx context.Context, s Store, key string, fn bool) error {
	switch {
	case ctx == nil:
		return argerr.New(name, nil, "the context must not be nil")
	case s == nil:
		return argerr.New(name, nil, "the store must not be nil")
	case !fn:
		return argerr.New(name, nil, "the function to run must not be nil")
	}
	return ValidateKey(key)
}

// output is what one execution produced: the value to return and store,
// whether it outgrew the cap while being recorded, and, for a failure,
// whether it must release the key even with KeepFailures.
type output struct {
	value    []byte
	overflow bool
	release  bool
}

type work func(context.Context) (output, error)

var errMaxWait = errors.New("waited longer than WithMaxWait")

// do claims key, or waits for the execution that holds it, and runs w at
// most once.
func (c *config) do(ctx context.Context, s Store, key StoreKey, fp Fingerprint, w work) (Result, error) {
	claim := Record{Status: InProgress, Token: rand.Text(), Fingerprint: fp}
	waitCtx := ctx
	for n := 1; ; n++ {
		rec, claimed, err := s.Claim(ctx, key, claim, c.lease)
		switch {
		case err != nil:
			return Result{}, storeError(key, err)
		case claimed:
			return c.run(ctx, s, key, claim, w)
		case rec.Status != InProgress || rec.Fingerprint != fp:
			return settled(key, rec, fp)
		}
		if n == 1 && c.maxWait > 0 {
			var cancel context.CancelFunc
			waitCtx, cancel = context.WithTimeoutCause(ctx, c.maxWait, errMaxWait)
			defer cancel()
		}
		if err := c.wait(waitCtx, s, key, n); err != nil {
			return Result{}, classify.Retryable(&Error{Reason: ErrInProgress, Key: key.Key, Execution: rec.Token, Err: err})
		}
	}
}

// run runs w under the claim. Its outcome, if the store records it only
// after the call returned, is fn's own; the observers hear of a failure to
// record it.
func (c *config) run(ctx context.Context, s Store, key StoreKey, claim Record, w work) (Result, error) {
	var late func(error)
	if len(c.observers) > 0 {
		late = func(err error) { c.reportLate(ctx, key, claim.Token, err) }
	}
	res, _, err := c.execute(ctx, s, key, claim, w, late)
	return res, err
}

// settled answers from a finished record that this call did not claim, or
// from a claim with another fingerprint.
func settled(key StoreKey, rec Record, fp Fingerprint) (Result, error) {
	if rec.Fingerprint != fp {
		return Result{}, classify.Permanent(&Error{Reason: ErrKeyReuse, Key: key.Key, Execution: rec.Token})
	}
	switch rec.Status {
	case Succeeded:
		return Result{Value: rec.Value, Execution: rec.Token, Replay: true, ReplayOf: rec.Token}, nil
	case NotRetained:
		return Result{}, classify.Permanent(&Error{Reason: ErrNotRetained, Key: key.Key, Execution: rec.Token})
	case Failed:
		return Result{}, classify.Permanent(&Error{Reason: ErrStoredFailure, Key: key.Key, Execution: rec.Token, Err: errors.New(string(rec.Value))})
	}
	return Result{}, storeError(key, fmt.Errorf("unexpected record with status %v", rec.Status))
}

// wait returns when the execution holding key may have ended, or with the
// cause of ctx's end.
func (c *config) wait(ctx context.Context, s Store, key StoreKey, n int) error {
	if w, ok := s.(Waiter); ok {
		err := w.Wait(ctx, key)
		if err != nil && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return err
	}
	return sleep(ctx, pollDelay(n, c.poll))
}

// pollDelay is the n-th wait between checks: 10ms doubling up to max.
func pollDelay(n int, max time.Duration) time.Duration {
	d := firstPoll
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
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
