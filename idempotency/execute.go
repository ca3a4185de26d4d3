package idempotency

import (
	"context"
	"errors"
	"sync"
	"time"
)

// execute runs w under the claim this call holds, keeps the claim alive while
// w runs, and records the outcome. If w panics, the claim is released and the
// panic goes on.
func (c *execConfig) execute(ctx context.Context, s Store, key StoreKey, claim Record, w work) (res Result, err error) {
	res.Execution = claim.Token
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := c.heartbeat(ctx, s, key, claim.Token, cancel)
	returned := false
	defer func() {
		if !returned { // w panicked or called runtime.Goexit
			stop()
			_ = c.release(ctx, s, key, claim.Token)
		}
	}()
	out, werr := w(wctx)
	returned = true
	stop()
	res.Value = out.value
	if lost := context.Cause(wctx); errors.Is(lost, ErrClaimLost) {
		// Another executor may own the key now: recording anything would
		// be refused, and must be.
		return res, errors.Join(werr, lost)
	}
	if werr != nil {
		return res, c.failed(ctx, s, key, claim, out, werr)
	}
	return res, c.succeeded(ctx, s, key, claim, out)
}

// succeeded stores the result, or "not retained" when it exceeds the cap or
// the store cannot keep it.
func (c *execConfig) succeeded(ctx context.Context, s Store, key StoreKey, claim Record, out output) error {
	rec := Record{Status: Succeeded, Token: claim.Token, Fingerprint: claim.Fingerprint, Value: out.value}
	if out.overflow || len(out.value) > c.maxResult {
		rec.Status, rec.Value = NotRetained, nil
	}
	err := c.complete(ctx, s, key, rec)
	if errors.Is(err, ErrTooLarge) && rec.Status != NotRetained {
		rec.Status, rec.Value = NotRetained, nil
		err = c.complete(ctx, s, key, rec)
	}
	if err != nil {
		return storeError(key, err)
	}
	return nil
}

// failed releases the key, or keeps the failure with KeepFailures (if it fits
// under the cap and in the store, and may be kept at all), and returns werr
// with any store failure joined to it.
func (c *execConfig) failed(ctx context.Context, s Store, key StoreKey, claim Record, out output, werr error) error {
	var err error
	if v := c.failValue(out.value, werr); c.keepFailures && !out.release && len(v) <= c.maxResult && !out.overflow {
		err = c.complete(ctx, s, key, Record{Status: Failed, Token: claim.Token, Fingerprint: claim.Fingerprint, Value: v})
		if errors.Is(err, ErrTooLarge) {
			err = c.release(ctx, s, key, claim.Token)
		}
	} else {
		err = c.release(ctx, s, key, claim.Token)
	}
	if err != nil {
		return errors.Join(werr, storeError(key, err))
	}
	return werr
}

// afterwards returns a context for recording an outcome: it keeps ctx's
// values but not its cancellation — the work is done and its record must not
// be lost because the caller gave up — and lasts at most the lease, after
// which the claim is dead anyway.
func afterwards(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), d)
}

func (c *execConfig) complete(ctx context.Context, s Store, key StoreKey, rec Record) error {
	actx, cancel := afterwards(ctx, c.lease)
	defer cancel()
	return s.Complete(actx, key, rec, c.retention)
}

func (c *execConfig) release(ctx context.Context, s Store, key StoreKey, token string) error {
	actx, cancel := afterwards(ctx, c.lease)
	defer cancel()
	return s.Release(actx, key, token)
}

// heartbeat extends the claim every lease/3 until stop is called. If the
// claim is lost — it expired, or another execution took the key — it cancels
// the work's context with an ErrClaimLost cause, since another executor may
// now be doing the same work. stop waits for the heartbeat to end.
func (c *execConfig) heartbeat(ctx context.Context, s Store, key StoreKey, token string, lost context.CancelCauseFunc) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	every := c.lease / 3
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			actx, cancel := afterwards(ctx, every)
			err := s.Extend(actx, key, token, c.lease)
			cancel()
			if errors.Is(err, ErrClaimLost) {
				lost(&Error{Reason: ErrClaimLost, Key: key.Key, Execution: token})
				return
			}
		}
	}()
	return sync.OnceFunc(func() {
		close(quit)
		<-done
	})
}
