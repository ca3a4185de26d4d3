package hedge

import (
	"time"

	"github.com/retrykit/retry/internal/argerr"
)

// Delay decides how long a call waits for an attempt before it starts another
// alongside. The retry loop calls Next once per call, and Observe once per
// successful call. One Delay is shared by every call of a Retrier: its
// methods must be safe for concurrent use and quick.
type Delay interface {
	// Next returns the hedging delay for a call starting now.
	Next() time.Duration
	// Observe reports the latency of a call that succeeded: from the start of
	// the oldest attempt still running to the first success. A delay that
	// does not learn ignores it.
	Observe(latency time.Duration)
}

// Fixed hedges after the same delay on every call. The Tail at Scale's
// BigTable benchmark hedged after a fixed 10ms.
type Fixed time.Duration

// Next returns the fixed delay.
func (f Fixed) Next() time.Duration { return time.Duration(f) }

// Observe does nothing: a fixed delay does not learn.
func (Fixed) Observe(time.Duration) {}

// String returns the delay, e.g. "10ms".
func (f Fixed) String() string { return time.Duration(f).String() }

// Validate reports a delay that is not positive: a hedge after 0 would
// double every call, which is load, not hedging.
func (f Fixed) Validate() error {
	if f <= 0 {
		return argerr.New("hedge.Fixed", time.Duration(f), "must be positive")
	}
	return nil
}
