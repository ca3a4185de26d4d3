package queuetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/retrykit/retry/dlq"
)

// A lapse test replays through a handle whose claims lapse after shortClaim,
// and sleeps lapseWait in its enqueue: the claim has lapsed when the enqueue
// returns, whatever the clock's resolution.
const (
	shortClaim = time.Millisecond
	longClaim  = time.Minute
	lapseWait  = 5 * time.Millisecond
)

// Handles opens queues on one store: each call returns a handle on the same
// store whose replay claims lapse after claim.
type Handles func(claim time.Duration) dlq.Queue

// RunLapses checks what a queue whose replay claims lapse (a ClaimTimeout)
// does when an enqueue outlasts its claim: the letter leaves the queue if no
// other replay took it meanwhile; otherwise the replay reports
// dlq.ErrClaimLapsed and leaves the letter to the other; a death put after
// the lapse is a new letter, kept. open is called once per subtest, and
// returns the Handles of a new, empty store, released with t.Cleanup. A nil t
// or open is a *retry.InvalidError, reported to t too if there is one, and
// runs nothing.
func RunLapses(t *testing.T, open func(t *testing.T) Handles) error {
	if err := check("queuetest.RunLapses", t, open); err != nil {
		return err
	}
	t.Helper()
	tests := []struct {
		name string
		test func(*testing.T, Handles)
	}{
		{"a lapsed claim nobody took still removes the letter", testLapseUntouched},
		{"a lapsed claim another replay holds is reported, and the letter left to it", testLapseHeld},
		{"a lapsed claim another replay finished is reported", testLapseFinished},
		{"a death put after the lapse is kept", testLapseNewDeath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := open(t)
			if h == nil {
				t.Fatal("queuetest: the function that opens a store returned nil")
			}
			tt.test(t, h)
		})
	}
	return nil
}

// slow is an Enqueuer that outlasts a short claim, then calls then.
func slow(then func() error) dlq.EnqueueFunc {
	return func(context.Context, dlq.Job) error {
		time.Sleep(lapseWait)
		return then()
	}
}

func testLapseUntouched(t *testing.T, h Handles) {
	l := full("llm-jobs", "job-1")
	short := h(shortClaim)
	put(t, short, l)
	if err := short.Replay(context.Background(), l.ID, slow(func() error { return nil })); err != nil {
		t.Fatalf("Replay = %v; want nil: nobody took the letter", err)
	}
	if _, err := short.Get(context.Background(), l.ID); !errors.Is(err, dlq.ErrNotFound) {
		t.Fatalf("Get after the replay = %v; want ErrNotFound: a letter reported replayed is gone", err)
	}
}

func testLapseHeld(t *testing.T, h Handles) {
	ctx := context.Background()
	l := full("llm-jobs", "job-1")
	short, long := h(shortClaim), h(longClaim)
	put(t, short, l)
	entered, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	rep, err := dlq.Replay(ctx, short, dlq.Filter{IDs: []string{l.ID}}, slow(func() error {
		go func() {
			done <- long.Replay(ctx, l.ID, dlq.EnqueueFunc(func(context.Context, dlq.Job) error {
				close(entered)
				<-release
				return nil
			}))
		}()
		<-entered // the other replay took the letter and is enqueuing it
		return nil
	}))
	if !errors.Is(err, dlq.ErrClaimLapsed) || !slices.Equal(rep.Lapsed, []string{l.ID}) || len(rep.Replayed) != 0 {
		t.Fatalf("Replay = %+v, %v; want the letter reported lapsed, not replayed", rep, err)
	}
	if _, err := short.Get(ctx, l.ID); err != nil {
		t.Fatalf("Get while the other replay holds it = %v; want the letter", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the other replay = %v; want nil", err)
	}
	if _, err := short.Get(ctx, l.ID); !errors.Is(err, dlq.ErrNotFound) {
		t.Fatalf("Get after the other replay = %v; want ErrNotFound", err)
	}
}

func testLapseFinished(t *testing.T, h Handles) {
	ctx := context.Background()
	l := full("llm-jobs", "job-1")
	short, long := h(shortClaim), h(longClaim)
	put(t, short, l)
	var other error
	err := short.Replay(ctx, l.ID, slow(func() error {
		other = long.Replay(ctx, l.ID, &recorder{})
		return nil
	}))
	if !errors.Is(err, dlq.ErrClaimLapsed) || other != nil {
		t.Fatalf("Replay = %v (the other: %v); want ErrClaimLapsed, and nil for the other", err, other)
	}
	if _, err := short.Get(ctx, l.ID); !errors.Is(err, dlq.ErrNotFound) {
		t.Fatalf("Get = %v; want ErrNotFound: the other replay removed it", err)
	}
}

func testLapseNewDeath(t *testing.T, h Handles) {
	ctx := context.Background()
	l := full("llm-jobs", "job-1")
	short, long := h(shortClaim), h(longClaim)
	put(t, short, l)
	again := l
	again.Attempts, again.LastFailure = 9, l.LastFailure.Add(time.Hour)
	var stored bool
	var putErr error
	err := short.Replay(ctx, l.ID, slow(func() error {
		stored, putErr = long.Put(ctx, again) // the replayed job died again
		return nil
	}))
	if err != nil || !stored || putErr != nil {
		t.Fatalf("Replay = %v, Put during it = %v, %v; want nil, and the new death stored", err, stored, putErr)
	}
	got, err := short.Get(ctx, l.ID)
	if err != nil {
		t.Fatalf("the new death was lost: %v", err)
	}
	same(t, "the new letter", got, again)
}
