package idempotency_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rule every caller gets: it returns by its deadline plus 100ms, however
// long the store takes to record what its function did.
const (
	callerDeadline = 300 * time.Millisecond
	deadlineMargin = 100 * time.Millisecond
)

// hung is a memory store that does not answer the methods it hangs on
// until answers is closed (then does what it was asked), or until their
// context ends (then returns its error, and does nothing).
type hung struct {
	memStore
	complete, release, extend bool
	answers                   chan struct{}
}

func newHung(t *testing.T) *hung { return &hung{memStore: newMemory(t), answers: make(chan struct{})} }

func (h *hung) hang(ctx context.Context, hangs bool) error {
	if !hangs {
		return nil
	}
	select {
	case <-h.answers:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *hung) Complete(ctx context.Context, key idempotency.StoreKey, rec idempotency.Record, retention time.Duration) error {
	if err := h.hang(ctx, h.complete); err != nil {
		return err
	}
	return h.memStore.Complete(ctx, key, rec, retention)
}

func (h *hung) Release(ctx context.Context, key idempotency.StoreKey, token string) error {
	if err := h.hang(ctx, h.release); err != nil {
		return err
	}
	return h.memStore.Release(ctx, key, token)
}

func (h *hung) Extend(ctx context.Context, key idempotency.StoreKey, token string, lease time.Duration) error {
	if err := h.hang(ctx, h.extend); err != nil {
		return err
	}
	return h.memStore.Extend(ctx, key, token, lease)
}

func TestDoReturnsByItsDeadlineWhileAHungStoreRecordsTheOutcome(t *testing.T) {
	tests := []struct {
		name  string
		hang  func(*hung)
		err   error // what fn returns, and the first call with it
		opts  []idempotency.Option
		check func(t *testing.T, retry idempotency.Result, err error, runs int32)
	}{
		{"a success, while Complete hangs, is replayed once recorded", func(h *hung) { h.complete = true }, nil, nil,
			func(t *testing.T, retry idempotency.Result, err error, runs int32) {
				require.NoError(t, err)
				assert.True(t, retry.Replay)
				assert.Equal(t, "v", string(retry.Value))
				assert.Equal(t, int32(1), runs, "fn ran once")
			}},
		{"a failure, while Release hangs, frees the key once released", func(h *hung) { h.release = true }, errBoom, nil,
			func(t *testing.T, retry idempotency.Result, err error, runs int32) {
				require.ErrorIs(t, err, errBoom)
				assert.False(t, retry.Replay)
				assert.Equal(t, int32(2), runs, "the retry ran fn again")
			}},
		{"a kept failure, while Complete hangs, is kept once recorded", func(h *hung) { h.complete = true }, errBoom,
			opts(idempotency.KeepFailures()),
			func(t *testing.T, _ idempotency.Result, err error, runs int32) {
				require.ErrorIs(t, err, idempotency.ErrStoredFailure)
				assert.Equal(t, int32(1), runs, "fn ran once")
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newHung(t)
				tt.hang(s)
				start := time.Now()
				time.AfterFunc(2*time.Second, func() { close(s.answers) }) // the store answers again
				fn := &counter{value: "v", err: tt.err}
				ctx, cancel := context.WithTimeout(t.Context(), callerDeadline)
				defer cancel()
				res, err := idempotency.Do(ctx, s, "k", fp, fn.fn, tt.opts...)
				took := time.Since(start)
				assert.LessOrEqual(t, took, callerDeadline+deadlineMargin, "the caller returned %v after its call began", took)
				t.Logf("returned %v after a %v deadline", took, callerDeadline)
				if tt.err != nil {
					require.ErrorIs(t, err, tt.err)
					assert.Equal(t, tt.err, err, "the caller gets fn's error unchanged")
				} else {
					require.NoError(t, err, "the caller gets fn's result: its record is on its way")
					assert.Equal(t, "v", string(res.Value))
				}

				time.Sleep(time.Second - took)
				retry, err := idempotency.Do(t.Context(), s, "k", fp, fn.fn, tt.opts...)
				assert.Equal(t, 2*time.Second, time.Since(start), "a retry waits for the record")
				tt.check(t, retry, err, fn.runs.Load())
			})
		})
	}
}

func TestDoReturnsByItsDeadlineWhileAHungStoreExtendsTheClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newHung(t)
		s.extend = true // the extension at 1s hangs until the store answers at 2s
		start := time.Now()
		time.AfterFunc(2*time.Second, func() { close(s.answers) })
		ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
		defer cancel()
		fn := &counter{d: time.Hour}
		_, err := idempotency.Do(ctx, s, "k", fp, fn.fn, idempotency.WithLease(3*time.Second))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 1500*time.Millisecond, time.Since(start), "the extension in flight is dropped: the key is released instead")
		fn.d = 0
		_, err = idempotency.Do(t.Context(), s, "k", fp, fn.fn)
		require.NoError(t, err)
		assert.Equal(t, 1500*time.Millisecond, time.Since(start), "the key was free at once")
	})
}

func TestARecordThatFailsAfterTheCallReturnedIsObserved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newHung(t)
		s.complete = true // and the store never answers
		var (
			mu  sync.Mutex
			got []observe.Event
		)
		type ctxKey struct{}
		watch := idempotency.WithObserver(observe.Func(func(ctx context.Context, e observe.Event) {
			assert.Equal(t, "the caller's", ctx.Value(ctxKey{}), "the observer gets the caller's context")
			mu.Lock()
			defer mu.Unlock()
			got = append(got, e)
		}))
		ctx, cancel := context.WithTimeout(context.WithValue(t.Context(), ctxKey{}, "the caller's"), callerDeadline)
		defer cancel()
		start := time.Now()
		fn := &counter{value: "v"}
		res, err := idempotency.Do(ctx, s, "k", fp, fn.fn, watch)
		require.NoError(t, err)
		assert.LessOrEqual(t, time.Since(start), callerDeadline+deadlineMargin)

		time.Sleep(30 * time.Second) // the default lease, which bounds the recording
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, got, 1, "one failure, reported when the lease ended it")
		assert.Equal(t, observe.Request, got[0].Kind)
		require.ErrorIs(t, got[0].Err, idempotency.ErrStore)
		require.ErrorIs(t, got[0].Err, context.DeadlineExceeded)
		assert.Equal(t, idempotency.Event{Outcome: "executed", Key: "k", Execution: res.Execution, Err: got[0].Err}, got[0].Detail)
	})
}

func TestMiddlewareReturnsByTheEndOfItsRequestWhileAHungStoreRecordsTheResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newHung(t)
		s.complete = true
		start := time.Now()
		time.AfterFunc(2*time.Second, func() { close(s.answers) })
		var (
			mu       sync.Mutex
			outcomes []idempotency.Event
		)
		watch := idempotency.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
			mu.Lock()
			defer mu.Unlock()
			outcomes = append(outcomes, e.Detail.(idempotency.Event))
		}))
		var runs int
		h := guarded(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			runs++
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte("made"))
		}), s, watch)
		send := func(ctx context.Context) *httptest.ResponseRecorder {
			req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/orders", strings.NewReader("{}"))
			req.Header.Set(idempotency.HeaderKey, "k")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec
		}
		ctx, cancel := context.WithTimeout(t.Context(), callerDeadline) // the client leaves then
		defer cancel()
		first := send(ctx)
		took := time.Since(start)
		assert.LessOrEqual(t, took, callerDeadline+deadlineMargin, "the handler returned %v after the request began", took)
		assert.Equal(t, http.StatusCreated, first.Code)
		mu.Lock()
		assert.Empty(t, outcomes, "not reported before it is recorded")
		mu.Unlock()

		time.Sleep(2*time.Second - took)
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, []idempotency.Event{{Outcome: "executed", Status: http.StatusCreated, Key: "k", Execution: outcomes[0].Execution}}, outcomes,
			"reported once, when recorded")
		mu.Unlock()
		again := send(t.Context())
		assert.Equal(t, "made", again.Body.String())
		assert.Equal(t, "true", again.Header().Get(headerReplay))
		assert.Equal(t, 1, runs)
	})
}

// BenchmarkDoExecutes runs fn under a fresh key each time, with a context
// that can end (b.Context) and with one that cannot: the first records the
// outcome from a goroutine, so that a hung store cannot hold its caller.
func BenchmarkDoExecutes(b *testing.B) {
	for _, bb := range []struct {
		name string
		ctx  func(b *testing.B) context.Context
	}{
		{"a context that can end", func(b *testing.B) context.Context { return b.Context() }},
		{"a context that cannot", func(*testing.B) context.Context { return context.Background() }},
	} {
		b.Run(bb.name, func(b *testing.B) {
			s := newBounded(b, idempotency.MemoryConfig{MaxEntries: 1 << 30, MaxBytes: 1 << 40})
			fn := (&counter{value: "receipt"}).fn
			ctx := bb.ctx(b)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_, _ = idempotency.Do(ctx, s, strconv.Itoa(i), fp, fn, idempotency.WithRetention(time.Millisecond))
			}
		})
	}
}
