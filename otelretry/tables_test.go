package otelretry_test

import (
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/otelretry"
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// retried is the event of a failure classified with reason that the loop
// retries.
func retried(reason string) observe.Event {
	return observe.Event{Kind: observe.RetryScheduled, Attempt: 1, Started: 1,
		Decision: classify.Decision{Verdict: classify.Retry, Reason: reason}}
}

// TestSQLAndIdempotencyReasonsAreClassesOfTheirOwn: a failure of a SQLSTATE
// class or of the idempotency protocol is counted under its own retry.class,
// not under "other" as a custom classifier's reason is.
func TestSQLAndIdempotencyReasonsAreClassesOfTheirOwn(t *testing.T) {
	reasons := []string{
		classify.ReasonSerialization, classify.ReasonDeadlock, classify.ReasonTooManyConnections,
		classify.ReasonSQLConnection, classify.ReasonIntegrity,
		classify.ReasonKeyInProgress, classify.ReasonKeyReuse, classify.ReasonNotRetained,
		classify.ReasonStoredFailure, classify.ReasonClaimLost,
	}
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{})
	want := map[string]point{}
	for _, r := range reasons {
		o.Observe(t.Context(), retried(r))
		want["retry.attempts{retry.class="+r+","+name+",retry.verdict=retry}"] = point{Value: 1}
	}
	assert.Equal(t, want, only(s.collect(t), "retry.attempts"))
}

// TestEveryReasonOfTheLibraryIsAClassOfItsOwn walks classify.Reasons, the
// one list of failure classes: each is a retry.class value of its own, so a
// reason added to the list is one too.
func TestEveryReasonOfTheLibraryIsAClassOfItsOwn(t *testing.T) {
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{})
	want := map[string]point{}
	for r := range classify.Reasons() {
		require.NotEqual(t, "other", r)
		o.Observe(t.Context(), retried(r))
		want["retry.attempts{retry.class="+r+","+name+",retry.verdict=retry}"] = point{Value: 1}
	}
	o.Observe(t.Context(), retried("quota of tenant 42"))
	o.Observe(t.Context(), retried("quota of tenant 43"))
	want["retry.attempts{retry.class=other,"+name+",retry.verdict=retry}"] = point{Value: 2}
	assert.Equal(t, want, only(s.collect(t), "retry.attempts"))
}

// TestEveryStopIsAnOutcomeOfItsOwn walks policy.Stops, the one list of stop
// reasons: each is a retry.outcome value of its own, its label, so a reason
// added to the list is one too; a reason this version does not know is
// "other".
func TestEveryStopIsAnOutcomeOfItsOwn(t *testing.T) {
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{})
	want := map[string]point{}
	gaveUp := func(stop policy.Stop) {
		o.Observe(t.Context(), observe.Event{Kind: observe.GaveUp, Stop: stop, Err: &retry.Error{Stop: stop}})
	}
	for stop := range policy.Stops() {
		label := stop.String()
		require.NotContains(t, []string{"success", "other", ""}, label)
		gaveUp(stop)
		want["retry.call.duration{"+name+",retry.outcome="+label+"}"] = point{Count: 1}
	}
	gaveUp(policy.Stop(200))
	want["retry.call.duration{"+name+",retry.outcome=other}"] = point{Count: 1}
	assert.Equal(t, want, only(s.collect(t), "retry.call.duration"))
}
