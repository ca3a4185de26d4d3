package otelretry_test

import (
	"errors"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/stretchr/testify/assert"
)

// TestGRPCReasonsAreClasses: every reason of grpcretry's status table is a
// retry.class of its own, not "other".
func TestGRPCReasonsAreClasses(t *testing.T) {
	reasons := []string{
		classify.ReasonGRPCCanceled, classify.ReasonGRPCUnknown, classify.ReasonGRPCInvalidArgument,
		classify.ReasonGRPCDeadlineExceeded, classify.ReasonGRPCNotFound, classify.ReasonGRPCAlreadyExists,
		classify.ReasonGRPCPermissionDenied, classify.ReasonGRPCResourceExhausted,
		classify.ReasonGRPCFailedPrecondition, classify.ReasonGRPCAborted, classify.ReasonGRPCOutOfRange,
		classify.ReasonGRPCUnimplemented, classify.ReasonGRPCInternal, classify.ReasonGRPCUnavailable,
		classify.ReasonGRPCDataLoss, classify.ReasonGRPCUnauthenticated, classify.ReasonGRPCPushbackStop,
		classify.ReasonGRPCCallerDeadline, classify.ReasonGRPCReplayOverflow,
	}
	s := newSDK(t)
	r, _ := observed(t, s, retry.WithClassifier(func(err error) classify.Decision {
		return classify.Decision{Verdict: classify.Stop, Reason: err.Error()}
	}))
	want := map[string]point{}
	for _, reason := range reasons {
		_ = r.Do(t.Context(), failThen(errors.New(reason)))
		want["retry.attempts{retry.class="+reason+","+name+",retry.verdict=stop}"] = point{Value: 1}
	}
	assert.Equal(t, want, only(s.collect(t), "retry.attempts"))
}
