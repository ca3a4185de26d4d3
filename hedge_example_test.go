package retry_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/hedge"
)

// A read that hangs is hedged after a millisecond: the second attempt
// answers, and the first one's context is cancelled.
func ExampleWithHedging() {
	r, err := retry.New(retry.Idempotent(), retry.WithHedging(hedge.Fixed(time.Millisecond), 2))
	if err != nil {
		panic(err)
	}
	var n atomic.Int32
	v, st, err := retry.HedgeValue(context.Background(), r, func(ctx context.Context) (string, error) {
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
// idempotent nor keyed is refused before anything runs.
func ExampleRetrier_Hedge() {
	r, _ := retry.New(retry.WithHedging(hedge.Fixed(10*time.Millisecond), 2))
	_, err := r.Hedge(context.Background(), func(context.Context) error { return nil })
	fmt.Println(err != nil, errors.Is(err, retry.ErrHedgeUnsafe))
	ctx, _ := retry.WithIdempotencyKey(context.Background(), "charge-7")
	st, err := r.Hedge(ctx, func(context.Context) error { return nil })
	fmt.Println(st.Winner, err)
	// Output:
	// true true
	// 1 <nil>
}
