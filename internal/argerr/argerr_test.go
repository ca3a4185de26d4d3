package argerr

import (
	"errors"
	"testing"
)

func TestErrorNamesTheArgumentAndMatchesErrInvalid(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{New("WithMaxAttempts", 0, "must be at least 1"), "retry: WithMaxAttempts(0): must be at least 1"},
		{New("budget.RatioConfig.Percent", 1.5, "must be in (0, 1]"), "budget.RatioConfig.Percent(1.5): must be in (0, 1]"},
		{New("budget.TokenBucket", nil, "must be made by NewTokenBucket"), "budget.TokenBucket(<nil>): must be made by NewTokenBucket"},
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
