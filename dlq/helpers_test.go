package dlq_test

import (
	"errors"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/policy"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// exhausted is the error of a retry loop that made n attempts, each failing
// with err, 10ms apart.
func exhausted(n int, err error) *retry.Error {
	d := classifyDefault(err)
	e := &retry.Error{Stop: policy.StopAttempts, Reason: retry.ErrExhausted, Last: err, Decision: d}
	for i := 1; i <= n; i++ {
		f := retry.Failure{Attempt: i, Err: err, Decision: d}
		if i < n {
			f.Delay = 10 * time.Millisecond
			e.Waited += f.Delay
		}
		e.Failures = append(e.Failures, f)
	}
	e.Attempts, e.Elapsed = n, e.Waited+time.Millisecond
	return e
}

// sample is the letter of job id of queue "test", dead at t0 after three
// attempts.
func sample(id string) dlq.Letter {
	l, _ := dlq.NewLetter(dlq.Job{ID: id, Source: "test", Payload: []byte(id)}, exhausted(3, errors.New("boom")), t0)
	return l
}

// classifyDefault classifies an error that did not come from a retry loop
// as a Retrier with no options would: the built-in table, then unclassified.
func classifyDefault(err error) classify.Decision {
	if d := classify.Default(err); d.Verdict != classify.NoOpinion {
		return d
	}
	return classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnclassified}
}

// memQueue returns an empty memory queue of the default bound.
func memQueue() dlq.Queue {
	q, err := dlq.NewMemory(0)
	if err != nil {
		panic(err)
	}
	return q
}
