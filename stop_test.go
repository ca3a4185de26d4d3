package retry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
)

// The loop itself sets Stop and the matching Reason on every *Error it
// returns: a check on a few reasons reached through the public API.
func TestTheLoopReportsTheStopAndItsSentinel(t *testing.T) {
	op := func(context.Context) error { return errors.New("transient") }
	r, _ := retry.New(retry.WithMaxAttempts(1))
	var e *retry.Error
	if assert.ErrorAs(t, r.Do(t.Context(), op), &e) {
		assert.Equal(t, policy.StopAttempts, e.Stop)
		assert.ErrorIs(t, e, retry.ErrExhausted)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if assert.ErrorAs(t, r.Do(ctx, op), &e) {
		assert.Equal(t, policy.StopCanceled, e.Stop)
		assert.ErrorIs(t, e, context.Canceled)
	}
	keyed, _ := retry.New(retry.WithPolicy(policy.Policy{RequireKey: true}))
	if assert.ErrorAs(t, keyed.Do(t.Context(), op), &e) {
		assert.Equal(t, policy.StopKeyRequired, e.Stop)
		assert.ErrorIs(t, e, retry.ErrKeyRequired)
	}
}
