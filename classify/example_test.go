package classify_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/retrykit/retry/classify"
)

func ExampleDefault() {
	busy := &classify.StatusError{Code: 503, Header: http.Header{"Retry-After": {"2"}}}
	fmt.Println(classify.Default(busy))
	fmt.Println(classify.Default(&classify.StatusError{Code: 500}))
	fmt.Println(classify.Default(&classify.StatusError{Code: 403}))
	fmt.Println(classify.Default(errors.New("something else")))
	// Output:
	// retry (http 503, after 2s)
	// retry (http 500, at most 1 per call)
	// stop (http 4xx)
	// no opinion
}

func ExampleChain() {
	errQuota := errors.New("quota exceeded")
	quota := func(err error) classify.Decision {
		if errors.Is(err, errQuota) {
			return classify.Decision{Verdict: classify.Stop, Reason: "quota"}
		}
		return classify.Decision{}
	}
	f := classify.Chain(quota, classify.Default)
	fmt.Println(f(fmt.Errorf("charge: %w", errQuota)))
	fmt.Println(f(errors.New("unknown")))
	// Output:
	// stop (quota)
	// no opinion
}

func ExamplePermanent() {
	err := classify.Permanent(errors.New("invalid card number"))
	fmt.Println(classify.Default(err))
	// Output: stop (marked permanent)
}

func ExampleParseRetryAfter() {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	fmt.Println(classify.ParseRetryAfter("120", now))
	fmt.Println(classify.ParseRetryAfter("Sun, 29 Nov 2026 12:00:30 GMT", now))
	fmt.Println(classify.ParseRetryAfter("-1", now))
	// Output:
	// 2m0s true
	// 30s true
	// 0s false
}

func ExampleCompletion() {
	fmt.Println(classify.Completion("", "stop"))
	fmt.Println(classify.Completion("I can't help with that.", "content_filter"))
	fmt.Println(classify.Completion("Paris", "stop"))
	// Output:
	// stop (empty output)
	// stop (content filtered)
	// no opinion
}

func ExampleMisconfigured() {
	// What net/http returns for a request it will never send, and for a
	// certificate nobody vouches for: no later attempt can succeed.
	scheme := &url.Error{Op: "Get", URL: "ftp://example.com", Err: errors.New(`unsupported protocol scheme "ftp"`)}
	cert := &url.Error{Op: "Get", URL: "https://example.com", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}
	fmt.Println(classify.Default(scheme))
	fmt.Println(classify.Default(cert))
	// Output:
	// stop (invalid request)
	// stop (tls certificate rejected)
}

func ExampleTimeouts() {
	// A dial that timed out sent nothing: retried whatever the operation is.
	// A read that timed out may have reached the server: marked Timeout, so
	// the retry loop repeats it only if it is idempotent or keyed.
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	read := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	fmt.Println(classify.Timeouts(dial))
	fmt.Println(classify.Timeouts(read))
	// Output:
	// retry (connect timeout)
	// retry (timeout, timed out)
}
