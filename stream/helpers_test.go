package stream_test

import (
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

var errReset = syscall.ECONNRESET

func httpErr(code int, retryAfter int) error {
	h := http.Header{}
	if retryAfter >= 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	return &classify.StatusError{Code: code, Header: h}
}

// exact is a Retrier with an exact (unjittered) schedule: 100ms, 200ms, 400ms…
func exact(t *testing.T, opts ...retry.Option) *retry.Retrier {
	t.Helper()
	base := []retry.Option{
		retry.WithBackoff(backoff.Exponential{Base: 100 * ms, MaxDelay: 10 * time.Second}),
		retry.WithJitter(jitter.None{}),
	}
	r, err := retry.New(append(base, opts...)...)
	require.NoError(t, err)
	return r
}
