package limit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
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
		{"an attempt that got no answer in time timed out", fmt.Errorf("read: %w", os.ErrDeadlineExceeded), limit.Outcome{Result: limit.TimedOut}},
		{"the caller's cancellation says nothing", context.Canceled, limit.Outcome{Result: limit.Other}},
		{"an unknown error says nothing", errors.New("odd"), limit.Outcome{Result: limit.Other}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := classify.Default(tt.err)
			if d.Verdict == classify.NoOpinion {
				d = classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnclassified}
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

// grpcErr stands for an error carrying a gRPC status: OutcomeOf reads only
// the decision, which is what grpcretry's table gives (its rows are copied
// here: the root module does not import grpc-go).
var grpcErr = errors.New("rpc error")

func TestOutcomeOfReadsGRPCReasons(t *testing.T) {
	stop := func(reason string) classify.Decision {
		return classify.Decision{Verdict: classify.Stop, Reason: reason}
	}
	retry := func(reason string) classify.Decision {
		return classify.Decision{Verdict: classify.Retry, Reason: reason}
	}
	exhaustedWait := classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonGRPCResourceExhausted, RetryAfter: 2 * time.Second}
	tests := []struct {
		name string
		d    classify.Decision
		want limit.Result
	}{
		{"RESOURCE_EXHAUSTED with a server wait is throttled", exhaustedWait, limit.Throttled},
		{"RESOURCE_EXHAUSTED with a wait of zero is throttled", retry(classify.ReasonGRPCResourceExhausted), limit.Throttled},
		{"RESOURCE_EXHAUSTED without a wait is a quota, not a rate", stop(classify.ReasonGRPCResourceExhausted), limit.Other},
		{"UNAVAILABLE says nothing of the rate", retry(classify.ReasonGRPCUnavailable), limit.Other},
		{"DEADLINE_EXCEEDED timed out", classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonGRPCDeadlineExceeded, Timeout: true}, limit.TimedOut},
		{"INTERNAL says nothing of the rate", retry(classify.ReasonGRPCInternal), limit.Other},
		{"UNKNOWN says nothing of the rate", retry(classify.ReasonGRPCUnknown), limit.Other},
		{"CANCELLED is the caller's", stop(classify.ReasonGRPCCanceled), limit.Other},
		{"the caller's own deadline says nothing", stop(classify.ReasonGRPCCallerDeadline), limit.Other},
		{"a stream's replay overflow is local", stop(classify.ReasonGRPCReplayOverflow), limit.Other},
		{"a pushback that says do not retry does not say send less", stop(classify.ReasonGRPCPushbackStop), limit.Other},
		{"INVALID_ARGUMENT was answered", stop(classify.ReasonGRPCInvalidArgument), limit.Accepted},
		{"NOT_FOUND was answered", stop(classify.ReasonGRPCNotFound), limit.Accepted},
		{"ALREADY_EXISTS was answered", stop(classify.ReasonGRPCAlreadyExists), limit.Accepted},
		{"PERMISSION_DENIED was answered", stop(classify.ReasonGRPCPermissionDenied), limit.Accepted},
		{"UNAUTHENTICATED was answered", stop(classify.ReasonGRPCUnauthenticated), limit.Accepted},
		{"FAILED_PRECONDITION was answered", stop(classify.ReasonGRPCFailedPrecondition), limit.Accepted},
		{"ABORTED was answered", stop(classify.ReasonGRPCAborted), limit.Accepted},
		{"OUT_OF_RANGE was answered", stop(classify.ReasonGRPCOutOfRange), limit.Accepted},
		{"UNIMPLEMENTED was answered", stop(classify.ReasonGRPCUnimplemented), limit.Accepted},
		{"DATA_LOSS was answered", stop(classify.ReasonGRPCDataLoss), limit.Accepted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := limit.OutcomeOf(grpcErr, tt.d)
			assert.Equal(t, tt.want, o.Result)
			if tt.want == limit.Throttled {
				assert.Equal(t, tt.d.RetryAfter, o.RetryAfter, "the server's wait goes with it")
			} else {
				assert.Zero(t, o.RetryAfter)
			}
		})
	}
}
