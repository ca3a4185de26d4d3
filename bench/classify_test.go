package bench

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	backoff4 "github.com/cenkalti/backoff/v4"
	backoff7 "github.com/cenkalti/backoff/v7"
	sethretry "github.com/sethvargo/go-retry"

	"github.com/retrykit/retry/classify"
)

// The two failures of BenchmarkClassify: a 503 asking to come back in two
// seconds, and a connection reset as the net package reports it, wrapped once
// more by the caller.
var (
	err503   error = &classify.StatusError{Code: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"2"}}}
	errReset error = fmt.Errorf("read: %w", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)})

	// errNotFound is not worth retrying, for the tests.
	errNotFound error = &classify.StatusError{Code: http.StatusNotFound}
)

// None of the peers ships a classifier: their users write the check below and
// plug it in where their library takes it. It is written the way such code is
// usually written, with errors.As and errors.Is from the standard library.

// transient reports what a peer's user would retry: 429, 502, 503, 504, and a
// reset or refused connection.
func transient(err error) bool {
	var se *classify.StatusError
	if errors.As(err, &se) {
		switch se.Code {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}

// serverWait is the Retry-After of a 429 or 503 given in seconds, as
// failsafe-go's failsafehttp.DelayFunc reads it from a response; 0 if none.
func serverWait(err error) time.Duration {
	var se *classify.StatusError
	if !errors.As(err, &se) || (se.Code != http.StatusTooManyRequests && se.Code != http.StatusServiceUnavailable) {
		return 0
	}
	if s, err := strconv.Atoi(se.Header.Get("Retry-After")); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// verdict is what a classification concluded, for the tests.
type verdict struct {
	retry bool
	wait  time.Duration
}

// classifiers maps each implementation to one classification of err, doing
// what that library's retry loop needs done to decide whether to retry and
// how long the server asked to wait.
var classifiers = map[string]func(err error) verdict{
	// retry: the built-in table; Retry-After is read from the header.
	"retry": func(err error) verdict {
		d := classify.Default(err)
		return verdict{d.Verdict == classify.Retry, d.RetryAfter}
	},
	// cenkalti v4: the operation returns Permanent(err) for what must not be
	// retried, and Retry looks for it with errors.As. v4 cannot honour a
	// server's wait.
	"cenkalti4": func(err error) verdict {
		if !transient(err) {
			err = backoff4.Permanent(err)
		}
		var perm *backoff4.PermanentError
		return verdict{!errors.As(err, &perm), 0}
	},
	// cenkalti v7: Permanent for what must not be retried, RetryAfter(d, err)
	// for a server's wait; Retry looks for both (errors.Is stands for its
	// errors.As on the unexported permanent type).
	"cenkalti7": func(err error) verdict {
		if !transient(err) {
			err = backoff7.Permanent(err)
		} else if d := serverWait(err); d > 0 {
			err = backoff7.RetryAfter(d, err)
		}
		if errors.Is(err, backoff7.ErrPermanent) {
			return verdict{}
		}
		var ra *backoff7.RetryAfterError
		if errors.As(err, &ra) {
			return verdict{true, ra.Duration}
		}
		return verdict{true, 0}
	},
	// avast v5: a RetryIf predicate, and a DelayType whose first step reads
	// the server's wait from the error (the backoff it falls back to is not
	// classification, and is measured by BenchmarkDelay).
	"avast5": func(err error) verdict {
		if !avastRetryIf(err) {
			return verdict{}
		}
		return verdict{true, serverWait(err)}
	},
	// sethvargo: the operation marks what may be retried with RetryableError.
	// go-retry cannot honour a server's wait, and its loop's errors.As for its
	// unexported mark cannot be reproduced here, so this figure is a lower
	// bound.
	"sethvargo": func(err error) verdict {
		marked := err
		if transient(err) {
			marked = sethretry.RetryableError(err)
		}
		return verdict{marked != err, 0}
	},
	// failsafe-go: a HandleIf predicate, and a DelayFunc that reads the
	// server's wait from the last error, or returns -1 for "use the configured
	// backoff", as failsafehttp.DelayFunc does with a response.
	"failsafe": func(err error) verdict {
		if !failsafeHandleIf(nil, err) {
			return verdict{}
		}
		return verdict{true, max(failsafeDelay(err), 0)}
	},
}

// avastRetryIf is what a user passes to avast.RetryIf.
func avastRetryIf(err error) bool { return transient(err) }

// failsafeHandleIf is what a user passes to the builder's HandleIf.
func failsafeHandleIf(_ any, err error) bool { return err != nil && transient(err) }

// failsafeDelay is the body of the DelayFunc a user passes to WithDelayFunc,
// which receives the execution and reads exec.LastError().
func failsafeDelay(err error) time.Duration {
	if d := serverWait(err); d > 0 {
		return d
	}
	return -1
}

// BenchmarkClassify classifies both failures per operation: the 503 with its
// Retry-After, and the wrapped connection reset.
func BenchmarkClassify(b *testing.B) {
	for _, name := range []string{"retry", "cenkalti4", "cenkalti7", "avast5", "sethvargo", "failsafe"} {
		b.Run(name, func(b *testing.B) {
			classifyBoth := classifiers[name]
			b.ReportAllocs()
			for b.Loop() {
				_ = classifyBoth(err503)
				_ = classifyBoth(errReset)
			}
		})
	}
}
