package retry_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/hedge"
)

// A read that hangs is hedged after a millisecond: the second attempt
// answers, and the first one's context is cancelled.
func ExampleNewHedger() {
	r, _ := retry.New(retry.Idempotent())
	h, err := retry.NewHedger(r, hedge.Fixed(time.Millisecond), 2)
	if err != nil {
		panic(err)
	}
	var n atomic.Int32
	v, st, err := retry.HedgeValue(context.Background(), h, func(ctx context.Context) (string, error) {
		if n.Add(1) == 1 {
			<-ctx.Done() // a hiccup: only the cancellation ends it
			return "", ctx.Err()
		}
		return "row 42", nil
	})
	fmt.Println(v, err)
	fmt.Printf("attempts=%d hedges=%d winner=%d\n", st.Attempts, st.Hedges, st.Winner)
	// Output:
	// row 42 <nil>
	// attempts=2 hedges=1 winner=2
}

// Hedging runs the operation twice at once: a call that is neither
// idempotent nor keyed is not hedged, its attempts made one at a time; with
// an idempotency key it is.
func ExampleHedger_Run() {
	r, _ := retry.New()
	h, _ := retry.NewHedger(r, hedge.Fixed(time.Millisecond), 2)
	slow := func(ctx context.Context) error {
		select {
		case <-time.After(20 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	st, err := h.Run(context.Background(), slow)
	fmt.Println(st.Attempts, st.Hedges, err)
	ctx, _ := retry.WithIdempotencyKey(context.Background(), "charge-7")
	st, err = h.Run(ctx, slow)
	fmt.Println(st.Attempts, st.Hedges, err)
	// Output:
	// 1 0 <nil>
	// 2 1 <nil>
}
