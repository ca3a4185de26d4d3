package bench

import (
	"context"
	"testing"
	"time"

	avast "github.com/avast/retry-go/v5"
	backoff4 "github.com/cenkalti/backoff/v4"
	backoff7 "github.com/cenkalti/backoff/v7"
	sethretry "github.com/sethvargo/go-retry"
)

// These tests check that every benchmark measures what it says: that each
// implementation's setup really retries twice and then succeeds, classifies
// the two failures the same way, and computes delays on the same schedule.

func TestEveryImplementationRetriesTwiceThenSucceeds(t *testing.T) {
	ctx := context.Background()
	for name, call := range map[string]func(op func() error) error{
		"retry": func(op func() error) error {
			return flakyRetry().Do(ctx, func(context.Context) error { return op() })
		},
		"cenkalti4": func(op func() error) error { return backoff4.Retry(op, flakyCenkalti4()) },
		"cenkalti7": func(op func() error) error {
			_, err := backoff7.Retry(ctx, func() (struct{}, error) { return struct{}{}, op() }, flakyCenkalti7()...)
			return err
		},
		"avast5": func(op func() error) error { return flakyAvast().Do(op) },
		"sethvargo": func(op func() error) error {
			return sethretry.Do(ctx, flakySeth(), func(context.Context) error {
				if err := op(); err != nil {
					return errTransientSeth
				}
				return nil
			})
		},
		"failsafe": func(op func() error) error { return flakyFailsafe().Run(op) },
		"plain": func(op func() error) error {
			return plainRetry(ctx, func(context.Context) error { return op() })
		},
	} {
		t.Run(name, func(t *testing.T) {
			n := 0
			err := call(func() error {
				if n++; n <= 2 {
					return errTransient
				}
				return nil
			})
			if err != nil || n != attempts {
				t.Fatalf("got %d attempts and %v; want %d attempts and success", n, err, attempts)
			}
		})
	}
}

func TestEveryImplementationStopsAfterThreeAttempts(t *testing.T) {
	ctx := context.Background()
	fail := func() error { return errTransient }
	for name, call := range map[string]func(count func()) error{
		"retry": func(count func()) error {
			return flakyRetry().Do(ctx, func(context.Context) error { count(); return fail() })
		},
		"cenkalti4": func(count func()) error {
			return backoff4.Retry(func() error { count(); return fail() }, flakyCenkalti4())
		},
		"cenkalti7": func(count func()) error {
			_, err := backoff7.Retry(ctx, func() (struct{}, error) { count(); return struct{}{}, fail() }, flakyCenkalti7()...)
			return err
		},
		"avast5": func(count func()) error { return flakyAvast().Do(func() error { count(); return fail() }) },
		"sethvargo": func(count func()) error {
			return sethretry.Do(ctx, flakySeth(), func(context.Context) error { count(); return errTransientSeth })
		},
		"failsafe": func(count func()) error { return flakyFailsafe().Run(func() error { count(); return fail() }) },
	} {
		t.Run(name, func(t *testing.T) {
			n := 0
			if err := call(func() { n++ }); err == nil || n != attempts {
				t.Fatalf("got %d attempts and %v; want %d attempts and an error", n, err, attempts)
			}
		})
	}
}

func TestEveryImplementationSucceedsAtOnce(t *testing.T) {
	ctx := context.Background()
	for name, err := range map[string]error{
		"retry":     successRetry().Do(ctx, succeed),
		"cenkalti4": backoff4.Retry(succeedNoCtx, successCenkalti4()),
		"cenkalti7": func() error { _, err := backoff7.Retry(ctx, succeedValue, successCenkalti7()...); return err }(),
		"avast5":    successAvast().Do(succeedNoCtx),
		"sethvargo": sethretry.Do(ctx, successSeth(), succeed),
		"failsafe":  successFailsafe().Run(succeedNoCtx),
		"plain":     opDirect(ctx),
	} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestClassifiersAgree(t *testing.T) {
	honoursRetryAfter := map[string]bool{"retry": true, "cenkalti7": true, "avast5": true, "failsafe": true}
	for name, classifyErr := range classifiers {
		t.Run(name, func(t *testing.T) {
			want503 := verdict{retry: true}
			if honoursRetryAfter[name] {
				want503.wait = 2 * time.Second
			}
			if got := classifyErr(err503); got != want503 {
				t.Errorf("503 with Retry-After: 2: got %+v, want %+v", got, want503)
			}
			if got := classifyErr(errReset); got != (verdict{retry: true}) {
				t.Errorf("wrapped ECONNRESET: got %+v, want a retry", got)
			}
			if got := classifyErr(errNotFound); got.retry {
				t.Errorf("404: got %+v, want no retry", got)
			}
		})
	}
}

func TestDelaysFollowTheSchedule(t *testing.T) {
	p := delayPolicy()
	c4, c7, a, s := delayCenkalti4(), delayCenkalti7(), delayAvast(), delaySeth()
	c4.Reset()
	c7.Reset()
	for i := range 8 {
		nominal := min(delayBase<<i, delayCap)
		for name, d := range map[string]time.Duration{
			"retry":     p.Delay(i+1, 0, 0, uint64(i)*0x9e3779b97f4a7c15),
			"cenkalti4": c4.NextBackOff(),
			"cenkalti7": c7.NextBackOff(),
			"avast5":    avast.FullJitterBackoffDelay(uint(i), nil, a),
			"sethvargo": func() time.Duration { d, _ := s.Next(); return d }(),
		} {
			// Full jitter draws in [0, nominal]; cenkalti's ±50 % in [nominal/2, 3*nominal/2].
			if d < 0 || d > nominal*3/2+1 {
				t.Errorf("%s: delay %d = %v, outside [0, %v]", name, i+1, d, nominal*3/2)
			}
		}
	}
}
