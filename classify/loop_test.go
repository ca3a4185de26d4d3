package classify_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/stretchr/testify/assert"
)

// TestTheLoopRetriesAConnectTimeoutWithoutAKey runs the decisions through
// the retry loop: a timeout that sent nothing needs no idempotency, one that
// may have reached the server does, and the caller's own deadline ends the
// call whatever the operation's error looks like.
func TestTheLoopRetriesAConnectTimeoutWithoutAKey(t *testing.T) {
	dialTimeout := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	readTimeout := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ETIMEDOUT)}
	failing := func(err error, times int, calls *int) func(context.Context) error {
		return func(context.Context) error {
			if *calls++; *calls <= times {
				return err
			}
			return nil
		}
	}
	fast := []retry.Option{retry.WithBackoff(backoff.Constant(0)), retry.WithMaxAttempts(3)}

	t.Run("a dial timeout is retried, not keyed, not idempotent", func(t *testing.T) {
		calls := 0
		assert.NoError(t, retry.Do(t.Context(), failing(dialTimeout, 2, &calls), fast...))
		assert.Equal(t, 3, calls)
	})
	t.Run("a read timeout still needs idempotency or a key", func(t *testing.T) {
		calls := 0
		err := retry.Do(t.Context(), failing(readTimeout, 2, &calls), fast...)
		assert.ErrorIs(t, err, retry.ErrNotIdempotent)
		assert.Equal(t, 1, calls)
	})
	t.Run("the caller's own deadline comes first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			calls := 0
			err := retry.Do(ctx, func(ctx context.Context) error {
				calls++
				<-ctx.Done() // a dial that ran out of the caller's time
				return dialTimeout
			}, fast...)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.False(t, errors.Is(err, retry.ErrExhausted))
			assert.Equal(t, 1, calls)
		})
	})
}

// TestTheLoopMakesOneAttemptOfWhatCanNeverSucceed: before, each of these was
// "unclassified" and made the default three attempts.
func TestTheLoopMakesOneAttemptOfWhatCanNeverSucceed(t *testing.T) {
	for _, err := range []error{
		&url.Error{Op: "Get", URL: "https://x", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}},
		&url.Error{Op: "Get", URL: "ftp://x", Err: errors.New(`unsupported protocol scheme "ftp"`)},
		&url.Error{Op: "Get", URL: "http://x", Err: errors.New(`net/http: invalid header field name "a\x1b"`)},
		&url.Error{Op: "Get", URL: "/", Err: errors.New("stopped after 10 redirects")},
	} {
		calls := 0
		got := retry.Do(t.Context(), func(context.Context) error { calls++; return err }, retry.WithBackoff(backoff.Constant(0)))
		assert.ErrorIs(t, got, retry.ErrPermanent, "%v", err)
		assert.Equal(t, 1, calls, "%v", err)
	}
}
