package limit_test

import (
	"context"
	"errors"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/limit"
	"github.com/stretchr/testify/assert"
)

func status(code int, retryAfter string) error {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &classify.StatusError{Code: code, Header: h}
}

func TestOutcomeOfTellsWhatAnAnswerSaysAboutTheRateLimit(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want limit.Outcome
	}{
		{"a success is accepted", nil, limit.Outcome{Result: limit.Accepted}},
		{"a 429 is throttled, with its Retry-After", status(429, "3"), limit.Outcome{Result: limit.Throttled, RetryAfter: 3 * time.Second}},
		{"a 429 without Retry-After is throttled", status(429, ""), limit.Outcome{Result: limit.Throttled}},
		{"a 404 was answered: accepted", status(404, ""), limit.Outcome{Result: limit.Accepted}},
		{"a 503 says nothing of the rate", status(503, "1"), limit.Outcome{Result: limit.Other}},
		{"a connection reset says nothing of the rate", syscall.ECONNRESET, limit.Outcome{Result: limit.Other}},
		{"the caller's cancellation says nothing", context.Canceled, limit.Outcome{Result: limit.Other}},
		{"an unknown error says nothing", errors.New("odd"), limit.Outcome{Result: limit.Other}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := classify.Default(tt.err)
			if d.Verdict == classify.NoOpinion {
				d = classify.General(tt.err)
			}
			assert.Equal(t, tt.want, limit.OutcomeOf(tt.err, d))
		})
	}
}

func TestResultString(t *testing.T) {
	assert.Equal(t, "accepted", limit.Accepted.String())
	assert.Equal(t, "throttled", limit.Throttled.String())
	assert.Equal(t, "other", limit.Other.String())
	assert.Equal(t, "result(?)", limit.Result(0).String())
}
