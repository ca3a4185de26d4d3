package idempotency

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/retrykit/retry/observe"
)

// recordGrace is how long past the end of its context a caller waits for
// its outcome to be recorded before it leaves the rest to the background: a
// store that answers needs a millisecond or two, and the caller returns well
// within its deadline plus 100ms.
const recordGrace = 25 * time.Millisecond

// execute runs w under the claim this call holds, keeps the claim alive while
// w runs, and records the outcome (see record). If w panics, the claim is
// released and the panic goes on. pending reports that the caller's context
// ended before the store answered: the recording goes on in the background,
// err holds w's error alone, and late gets the store's failure, or nil, when
// the recording ends.
func (c *execConfig) execute(ctx context.Context, s Store, key StoreKey, claim Record, w work, late func(error)) (res Result, pending bool, err error) {
	res.Execution = claim.Token
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := c.heartbeat(ctx, s, key, claim.Token, cancel)
	returned := false
	defer func() {
		if !returned { // w panicked or called runtime.Goexit
			stop()
			_, _ = c.record(ctx, key, func(actx context.Context) error { return s.Release(actx, key, claim.Token) }, nil)
		}
	}()
	out, werr := w(wctx)
	returned = true
	stop()
	res.Value = out.value
	if lost := context.Cause(wctx); errors.Is(lost, ErrClaimLost) {
		// Another executor may own the key now: recording anything would
		// be refused, and must be.
		return res, false, errors.Join(werr, lost)
	}
	if werr != nil {
		pending, err = c.record(ctx, key, func(actx context.Context) error { return c.failed(actx, s, key, claim, out, werr) }, late)
		if err != nil {
			return res, pending, errors.Join(werr, err)
		}
		return res, pending, werr
	}
	pending, err = c.record(ctx, key, func(actx context.Context) error { return c.succeeded(actx, s, key, claim, out) }, late)
	return res, pending, err
}

// record runs f, which records an outcome, on a context that keeps ctx's
// values but not its cancellation — the work is done, and its record must
// not be lost because the caller gave up — and lasts at most the lease,
// after which the claim is dead anyway. The caller waits for f until ctx
// ends and recordGrace more: no longer, so that a hung store cannot hold it
// past its deadline. Then f goes on in the background, record reports
// pending, and late (if not nil) gets f's failure as an *Error, or nil, when
// f returns, at the latest when the lease ends (for a store that honours its
// context).
func (c *execConfig) record(ctx context.Context, key StoreKey, f func(context.Context) error, late func(error)) (pending bool, err error) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.lease)
	if ctx.Done() == nil { // the caller cannot give up: no goroutine needed
		defer cancel()
		return false, recordError(key, f(actx))
	}
	done, left := make(chan error), make(chan struct{})
	go func() {
		defer cancel()
		err := recordError(key, f(actx))
		select {
		case done <- err:
		case <-left:
			if late != nil {
				late(err)
			}
		}
	}()
	select {
	case err := <-done:
		return false, err
	case <-ctx.Done():
	}
	grace := time.NewTimer(recordGrace)
	defer grace.Stop()
	select {
	case err := <-done:
		return false, err
	case <-grace.C:
		close(left)
		return true, nil
	}
}

// recordError wraps a failure to record an outcome as an *Error, and
// returns a nil error as nil.
func recordError(key StoreKey, err error) error {
	if err == nil {
		return nil
	}
	return storeError(key, err)
}

// reportLate tells the observers of a call that its outcome, recorded after
// it returned, could not be recorded.
func (c *execConfig) reportLate(ctx context.Context, key StoreKey, token string, err error) {
	if err == nil {
		return
	}
	e := observe.Event{Kind: observe.Request, Err: err, Detail: Event{Outcome: outcomeExecuted, Key: key.Key, Execution: token, Err: err}}
	for _, o := range c.observers {
		o.Observe(ctx, e)
	}
}

// succeeded stores the result, or "not retained" when it exceeds the cap or
// the store cannot keep it; it returns the store's failure.
func (c *execConfig) succeeded(ctx context.Context, s Store, key StoreKey, claim Record, out output) error {
	rec := Record{Status: Succeeded, Token: claim.Token, Fingerprint: claim.Fingerprint, Value: out.value}
	if out.overflow || len(out.value) > c.maxResult {
		rec.Status, rec.Value = NotRetained, nil
	}
	err := s.Complete(ctx, key, rec, c.retention)
	if errors.Is(err, ErrTooLarge) && rec.Status != NotRetained {
		rec.Status, rec.Value = NotRetained, nil
		err = s.Complete(ctx, key, rec, c.retention)
	}
	return err
}

// failed releases the key, or keeps the failure with KeepFailures (if it fits
// under the cap and in the store, and may be kept at all); it returns the
// store's failure.
func (c *execConfig) failed(ctx context.Context, s Store, key StoreKey, claim Record, out output, werr error) error {
	if v := c.failValue(out.value, werr); c.keepFailures && !out.release && len(v) <= c.maxResult && !out.overflow {
		err := s.Complete(ctx, key, Record{Status: Failed, Token: claim.Token, Fingerprint: claim.Fingerprint, Value: v}, c.retention)
		if !errors.Is(err, ErrTooLarge) {
			return err
		}
	}
	return s.Release(ctx, key, claim.Token)
}

// heartbeat extends the claim every lease/3 until stop is called. If the
// claim is lost — it expired, or another execution took the key — it cancels
// the work's context with an ErrClaimLost cause, since another executor may
// now be doing the same work. stop cancels an extension in flight, which the
// outcome's record makes moot, and waits for the heartbeat to end.
func (c *execConfig) heartbeat(ctx context.Context, s Store, key StoreKey, token string, lost context.CancelCauseFunc) (stop func()) {
	hctx, quit := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	every := c.lease / 3
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
			}
			actx, cancel := context.WithTimeout(hctx, every)
			err := s.Extend(actx, key, token, c.lease)
			cancel()
			if errors.Is(err, ErrClaimLost) {
				lost(&Error{Reason: ErrClaimLost, Key: key.Key, Execution: token})
				return
			}
		}
	}()
	return sync.OnceFunc(func() {
		quit()
		<-done
	})
}
