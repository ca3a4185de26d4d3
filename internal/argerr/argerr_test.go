package argerr

import (
	"errors"
	"testing"
)

func TestErrorNamesTheArgumentAndMatchesErrInvalid(t *testing.T) {
	inner := Field("backoff.Exponential.Factor", 0.5, "must be at least 1")
	tests := []struct {
		err  *Error
		want string
	}{
		{New("WithMaxAttempts", 0, "must be at least 1"), "retry: WithMaxAttempts(0): must be at least 1"},
		{New("budget.TokenBucket", nil, "must be made by NewTokenBucket"), "budget.TokenBucket(<nil>): must be made by NewTokenBucket"},
		{inner, "backoff.Exponential.Factor = 0.5: must be at least 1"},
		{Nested("policy.Policy.Backoff", struct{}{}, inner), "policy.Policy.Backoff: backoff.Exponential.Factor = 0.5: must be at least 1"},
		{&Error{Name: "WithX", Value: 1, Err: errors.New("bad")}, "retry: WithX(1): bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if !errors.Is(tt.err, ErrInvalid) {
			t.Errorf("%v does not match ErrInvalid", tt.err)
		}
	}
	cause := errors.New("cause")
	if err := (&Error{Name: "x.Y", Err: cause}); !errors.Is(err, cause) {
		t.Errorf("%v does not match its cause", err)
	}
}
