package classify_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func status(code int, retryAfter string) error {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &classify.StatusError{Code: code, Header: h}
}

func opErr(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: "tcp", Err: os.NewSyscallError(op, errno)}
}

// sdkError is a third-party error type with the recognised methods.
type sdkError struct {
	code int
	wait time.Duration
}

func (e sdkError) Error() string             { return fmt.Sprintf("sdk: status %d", e.code) }
func (e sdkError) HTTPStatusCode() int       { return e.code }
func (e sdkError) RetryAfter() time.Duration { return e.wait }

func TestDefaultClassifiesTheSourceTable(t *testing.T) {
	retry := func(reason string) classify.Decision {
		return classify.Decision{Verdict: classify.Retry, Reason: reason}
	}
	stop := func(reason string) classify.Decision {
		return classify.Decision{Verdict: classify.Stop, Reason: reason}
	}
	tests := []struct {
		name string
		err  error
		want classify.Decision
	}{
		{"connection reset is retried", opErr("read", syscall.ECONNRESET), retry(classify.ReasonConnReset)},
		{"connection refused is retried", opErr("dial", syscall.ECONNREFUSED), retry(classify.ReasonConnRefused)},
		{"connection aborted is retried", opErr("read", syscall.ECONNABORTED), retry(classify.ReasonConnAborted)},
		{"broken pipe is retried", opErr("write", syscall.EPIPE), retry(classify.ReasonBrokenPipe)},
		{"unreachable host is retried", opErr("dial", syscall.EHOSTUNREACH), retry(classify.ReasonUnreachable)},
		{"an HTTP client's EOF is a hang-up", &url.Error{Op: "Get", URL: "http://x", Err: io.EOF}, retry(classify.ReasonConnClosed)},
		{"a bare EOF gets no opinion", io.EOF, classify.Decision{}},
		{"a response cut short is retried", fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), retry(classify.ReasonConnClosed)},
		{"a temporary DNS failure is retried", &net.DNSError{Err: "server misbehaving", IsTemporary: true}, retry(classify.ReasonDNS)},
		{"a missing DNS name gets no opinion", &net.DNSError{Err: "no such host", IsNotFound: true}, classify.Decision{}},
		{"a timeout is retried and marked", opErr("read", syscall.ETIMEDOUT), classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonTimeout, Timeout: true}},
		{"a dial timeout sent nothing: retried, not marked", &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}, retry(classify.ReasonConnectTimeout)},
		{"a kernel connect timeout sent nothing", opErr("dial", syscall.ETIMEDOUT), retry(classify.ReasonConnectTimeout)},
		{"an HTTP client's dial timeout sent nothing", &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}}, retry(classify.ReasonConnectTimeout)},
		{"a dial timeout through a proxy sent nothing", &net.OpError{Op: "proxyconnect", Net: "tcp", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}}, retry(classify.ReasonConnectTimeout)},
		{"a DNS timeout while dialing sent nothing", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "i/o timeout", IsTimeout: true}}, retry(classify.ReasonConnectTimeout)},
		{"a TLS handshake timeout sent nothing", &url.Error{Op: "Get", URL: "https://x", Err: tlsHandshakeTimeout{}}, retry(classify.ReasonConnectTimeout)},
		{"a read timeout may have reached the server", &url.Error{Op: "Post", URL: "http://x", Err: opErr("read", syscall.ETIMEDOUT)}, classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonTimeout, Timeout: true}},
		{"a deadline next to a dial timeout is a deadline", errors.Join(context.DeadlineExceeded, &net.OpError{Op: "dial", Err: os.ErrDeadlineExceeded}), classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonTimeout, Timeout: true}},
		{"a dial that was refused is not a timeout", opErr("dial", syscall.ECONNREFUSED), retry(classify.ReasonConnRefused)},
		{"an unknown certificate authority stops", &url.Error{Op: "Get", URL: "https://x", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}, stop(classify.ReasonCertificate)},
		{"a bare x509 error stops", x509.UnknownAuthorityError{}, stop(classify.ReasonCertificate)},
		{"an expired certificate stops", x509.CertificateInvalidError{Reason: x509.Expired}, stop(classify.ReasonCertificate)},
		{"a certificate for another host stops", x509.HostnameError{Host: "x"}, stop(classify.ReasonCertificate)},
		{"an unsupported scheme stops", &url.Error{Op: "Get", URL: "ftp://x", Err: errors.New(`unsupported protocol scheme "ftp"`)}, stop(classify.ReasonInvalidRequest)},
		{"an unsupported scheme from a bare RoundTripper stops", errors.New(`unsupported protocol scheme ""`), stop(classify.ReasonInvalidRequest)},
		{"an invalid header name stops", errors.New(`net/http: invalid header field name "a\x1b"`), stop(classify.ReasonInvalidRequest)},
		{"an invalid header value stops", errors.New(`net/http: invalid header field value for "A"`), stop(classify.ReasonInvalidRequest)},
		{"an invalid trailer stops", errors.New(`net/http: invalid trailer field name "a\x1b"`), stop(classify.ReasonInvalidRequest)},
		{"an invalid method stops", errors.New(`net/http: invalid method "GET POST"`), stop(classify.ReasonInvalidRequest)},
		{"a URL without a host stops", &url.Error{Op: "Get", URL: "http:///x", Err: errors.New("http: no Host in request URL")}, stop(classify.ReasonInvalidRequest)},
		{"too many redirects stops", &url.Error{Op: "Get", URL: "/", Err: errors.New("stopped after 10 redirects")}, stop(classify.ReasonTooManyRedirects)},
		{"a text that only contains net/http's gets no opinion", errors.New(`proxy said: unsupported protocol scheme "ftp"`), classify.Decision{}},
		{"a caller's own redirect limit gets no opinion", errors.New("stopped after 3 redirects"), classify.Decision{}},
		{"a marker overrides a certificate failure", classify.Retryable(x509.UnknownAuthorityError{}), retry(classify.ReasonMarkedRetryable)},
		{"a deadline is a timeout", fmt.Errorf("call: %w", context.DeadlineExceeded), classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonTimeout, Timeout: true}},
		{"an os deadline is a timeout", os.ErrDeadlineExceeded, classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonTimeout, Timeout: true}},
		{"cancellation stops", fmt.Errorf("call: %w", context.Canceled), stop(classify.ReasonCanceled)},
		{"502 is retried", status(502, ""), retry(classify.ReasonBadGateway)},
		{"503 is retried", status(503, ""), retry(classify.ReasonUnavailable)},
		{"504 is retried", status(504, ""), retry(classify.ReasonGatewayTimeout)},
		{"503 with Retry-After waits as asked", status(503, "7"), classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnavailable, RetryAfter: 7 * time.Second}},
		{"429 with Retry-After waits as asked", status(429, "30"), classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonTooManyRequests, RetryAfter: 30 * time.Second}},
		{"429 without Retry-After is retried", status(429, ""), retry(classify.ReasonTooManyRequests)},
		{"429 with a garbage Retry-After is retried with backoff", status(429, "soon"), retry(classify.ReasonTooManyRequests)},
		{"502 ignores Retry-After", status(502, "30"), retry(classify.ReasonBadGateway)},
		{"500 is retried once", status(500, ""), classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonServerError, Limit: 1}},
		{"an unlisted 5xx is retried once", status(599, ""), classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonOtherServerError, Limit: 1}},
		{"501 stops", status(501, ""), stop(classify.ReasonNotImplemented)},
		{"400 stops", status(400, ""), stop(classify.ReasonClientError)},
		{"401 stops", status(401, ""), stop(classify.ReasonClientError)},
		{"403 stops", status(403, ""), stop(classify.ReasonClientError)},
		{"404 stops", status(404, ""), stop(classify.ReasonClientError)},
		{"409 stops", status(409, ""), stop(classify.ReasonClientError)},
		{"a wrapped status is found", fmt.Errorf("api: %w", status(503, "")), retry(classify.ReasonUnavailable)},
		{"a status in a joined error is found", errors.Join(errors.New("x"), status(400, "")), stop(classify.ReasonClientError)},
		{"a third-party status error is recognised", sdkError{code: 429, wait: 2 * time.Second}, classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonTooManyRequests, RetryAfter: 2 * time.Second}},
		{"a negative third-party wait is ignored", sdkError{code: 503, wait: -time.Second}, retry(classify.ReasonUnavailable)},
		{"a permanent marker stops whatever it wraps", classify.Permanent(status(503, "")), stop(classify.ReasonMarkedPermanent)},
		{"a retryable marker retries whatever it wraps", classify.Retryable(status(400, "")), retry(classify.ReasonMarkedRetryable)},
		{"a marker with a wait", classify.WithRetryAfter(errors.New("busy"), time.Minute), classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonMarkedRetryable, RetryAfter: time.Minute}},
		{"the outermost marker wins", classify.Permanent(classify.Retryable(errors.New("x"))), stop(classify.ReasonMarkedPermanent)},
		{"an unknown error gets no opinion", errors.New("validation failed"), classify.Decision{}},
		{"nil gets no opinion", nil, classify.Decision{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, classify.Default(tt.err))
		})
	}
}

func TestMarkersKeepTheWrappedError(t *testing.T) {
	base := errors.New("boom")
	for _, err := range []error{classify.Permanent(base), classify.Retryable(base), classify.WithRetryAfter(base, time.Second)} {
		assert.ErrorIs(t, err, base)
		assert.Equal(t, "boom", err.Error())
	}
	assert.NoError(t, classify.Permanent(nil))
	assert.NoError(t, classify.Retryable(nil))
	assert.NoError(t, classify.WithRetryAfter(nil, time.Second))
}

func TestRealNetworkErrors(t *testing.T) {
	t.Run("dialing a closed port is connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		_, err = net.Dial("tcp", addr)
		require.Error(t, err)
		assert.Equal(t, classify.ReasonConnRefused, classify.Default(err).Reason)
	})
	t.Run("an HTTP client timeout is a timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
		defer srv.Close()
		defer close(release)
		client := &http.Client{Timeout: 20 * time.Millisecond}
		_, err := client.Get(srv.URL)
		var uerr *url.Error
		require.ErrorAs(t, err, &uerr)
		d := classify.Default(err)
		assert.Equal(t, classify.Retry, d.Verdict)
		assert.True(t, d.Timeout)
	})
	t.Run("a server that hangs up mid-request is retried", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}))
		defer srv.Close()
		_, err := http.Get(srv.URL)
		require.Error(t, err)
		d := classify.Default(err)
		assert.Equal(t, classify.Retry, d.Verdict, "%v", err)
		assert.Contains(t, []string{classify.ReasonConnClosed, classify.ReasonConnReset}, d.Reason, "%v", err)
	})
}

func TestChainTakesTheFirstOpinion(t *testing.T) {
	calls := 0
	noOpinion := func(error) classify.Decision { calls++; return classify.Decision{} }
	stop := func(error) classify.Decision {
		calls++
		return classify.Decision{Verdict: classify.Stop, Reason: "mine"}
	}
	never := func(error) classify.Decision { t.Fatal("called after an opinion"); return classify.Decision{} }
	f := classify.Chain(noOpinion, nil, stop, never)
	assert.Equal(t, "mine", f(errors.New("x")).Reason)
	assert.Equal(t, 2, calls)
	assert.Equal(t, classify.Decision{}, classify.Chain()(errors.New("x")))
}

func TestResponseError(t *testing.T) {
	assert.NoError(t, classify.ResponseError(nil))
	assert.NoError(t, classify.ResponseError(&http.Response{StatusCode: 200}))
	assert.NoError(t, classify.ResponseError(&http.Response{StatusCode: 304}))
	err := classify.ResponseError(&http.Response{StatusCode: 503, Header: http.Header{"Retry-After": {"3"}}})
	var se *classify.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "http 503 Service Unavailable", err.Error())
	assert.Equal(t, 3*time.Second, se.RetryAfter())
	assert.Equal(t, "http 599", (&classify.StatusError{Code: 599}).Error())
	assert.Zero(t, (&classify.StatusError{Code: 503}).RetryAfter(), "no header")
}

func TestCompletion(t *testing.T) {
	assert.Equal(t, classify.Stop, classify.Completion("", "stop").Verdict)
	assert.Equal(t, classify.ReasonEmptyOutput, classify.Completion("", "stop").Reason)
	assert.Equal(t, classify.ReasonContentFiltered, classify.Completion("partial", "content_filter").Reason)
	assert.Equal(t, classify.NoOpinion, classify.Completion("hello", "stop").Verdict)
}

func TestDecisionString(t *testing.T) {
	assert.Equal(t, "no opinion", classify.Decision{}.String())
	assert.Equal(t, "retry (http 503, after 2s)", classify.Decision{Verdict: classify.Retry, Reason: "http 503", RetryAfter: 2 * time.Second}.String())
	assert.Equal(t, "retry (http 500, at most 1 per call)", classify.Decision{Verdict: classify.Retry, Reason: "http 500", Limit: 1}.String())
	assert.Equal(t, "retry (timeout, timed out)", classify.Decision{Verdict: classify.Retry, Reason: "timeout", Timeout: true}.String())
	assert.Equal(t, "verdict(9)", classify.Verdict(9).String())
}

func TestClassifyingAllocatesNothing(t *testing.T) {
	errs := []error{status(503, "2"), fmt.Errorf("x: %w", opErr("read", syscall.ECONNRESET)), errors.New("other")}
	for _, err := range errs {
		assert.Zero(t, testing.AllocsPerRun(100, func() { classify.Default(err) }), "%v", err)
	}
}

var sink classify.Decision

func BenchmarkClassify(b *testing.B) {
	b.ReportAllocs()
	errs := []error{status(503, "2"), fmt.Errorf("x: %w", opErr("read", syscall.ECONNRESET))}
	for i := range b.N {
		sink = classify.Default(errs[i&1])
	}
}

func TestGatewayKinds(t *testing.T) {
	upstream := &classify.StatusError{Code: 502, Kind: classify.KindUpstreamError}
	tests := []struct {
		name string
		err  error
		want classify.Decision
	}{
		{"an upstream error is not retried by default", upstream, classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonUpstream}},
		{"a wrapped upstream sentinel is not retried", fmt.Errorf("gateway: %w", classify.ErrUpstream), classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonUpstream}},
		{"a plain 502 is still retried", status(502, ""), classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonBadGateway}},
		{"a spend cap is never retried", &classify.StatusError{Code: 402, Kind: classify.KindSpendCapExceeded}, classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonSpendCap}},
		{"an exhausted quota on a 429 is never retried", &classify.StatusError{Code: 429, Kind: classify.KindInsufficientQuota, Header: http.Header{"Retry-After": {"1"}}}, classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonSpendCap}},
		{"a spend cap marked retryable is still not retried", classify.Retryable(fmt.Errorf("%w", classify.ErrSpendCap)), classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonSpendCap}},
		{"an unknown kind falls back to the status", &classify.StatusError{Code: 503, Kind: "backend-unavailable"}, classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnavailable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, classify.Default(tt.err))
		})
	}
	t.Run("the opt-in allows one extra attempt", func(t *testing.T) {
		f := classify.Chain(classify.UpstreamOnce, classify.Default)
		assert.Equal(t, classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUpstream, Limit: 1}, f(upstream))
		assert.Equal(t, classify.Decision{}, classify.UpstreamOnce(status(503, "")))
	})
	assert.Equal(t, "http 502 Bad Gateway (upstream-error)", upstream.Error())
}

// tlsHandshakeTimeout is net/http's unexported error for
// Transport.TLSHandshakeTimeout, rebuilt: only its text and Timeout are known.
type tlsHandshakeTimeout struct{}

func (tlsHandshakeTimeout) Error() string   { return "net/http: TLS handshake timeout" }
func (tlsHandshakeTimeout) Timeout() bool   { return true }
func (tlsHandshakeTimeout) Temporary() bool { return true }

type gaveUp struct{ error }

func (gaveUp) Final() bool { return true }

func TestFinal(t *testing.T) {
	inner := gaveUp{status(503, "")}
	assert.Equal(t, classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonRetriedInside}, classify.Final(fmt.Errorf("step 2: %w", inner)))
	assert.Equal(t, classify.Decision{}, classify.Final(status(503, "")))
	assert.Equal(t, classify.Decision{}, classify.Final(nil))
}

func BenchmarkClassifyEach(b *testing.B) {
	for _, err := range []error{status(503, "2"), fmt.Errorf("x: %w", opErr("read", syscall.ECONNRESET))} {
		b.Run(err.Error(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink = classify.Default(err)
			}
		})
	}
}

func TestRetryAfterMs(t *testing.T) {
	for _, tt := range []struct {
		header http.Header
		want   time.Duration
	}{
		{http.Header{"Retry-After-Ms": {"250"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"soon"}, "Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After-Ms": {"99999999999999999999999"}}, math.MaxInt64},
	} {
		assert.Equal(t, tt.want, (&classify.StatusError{Code: 429, Header: tt.header}).RetryAfter(), "%v", tt.header)
	}
}

func TestRetryAfterMsDoesNotSaturateEarly(t *testing.T) {
	se := &classify.StatusError{Code: 429, Header: http.Header{"Retry-After-Ms": {"9300000000"}}}
	assert.Equal(t, 9300000*time.Second, se.RetryAfter())
}

func TestMark(t *testing.T) {
	d := classify.Decision{Verdict: classify.Retry, Reason: "mine", RetryAfter: -time.Second}
	err := classify.Mark(errors.New("x"), d)
	assert.Equal(t, classify.Decision{Verdict: classify.Retry, Reason: "mine"}, classify.Default(err), "a negative wait is no wait")
	assert.NoError(t, classify.Mark(nil, d))
}

func TestNilAndZeroArgumentsHaveAMeaning(t *testing.T) {
	var nilStatus *classify.StatusError
	tests := []struct {
		name string
		call func() any
		want any
	}{
		{"Default(nil) has no opinion", func() any { return classify.Default(nil) }, classify.Decision{}},
		{"Misconfigured(nil) has no opinion", func() any { return classify.Misconfigured(nil) }, classify.Decision{}},
		{"Timeouts(nil) has no opinion", func() any { return classify.Timeouts(nil) }, classify.Decision{}},
		{"Chain() has no opinion", func() any { return classify.Chain()(errors.New("x")) }, classify.Decision{}},
		{"Chain(nil) skips nil", func() any { return classify.Chain(nil)(errors.New("x")) }, classify.Decision{}},
		{"Status(0) has no opinion", func() any { return classify.Status(0) }, classify.Decision{}},
		{"Permanent(nil) is nil", func() any { return classify.Permanent(nil) }, nil},
		{"ResponseError(nil) is nil", func() any { return classify.ResponseError(nil) }, nil},
		{"ParseRetryAfter of nothing is no wait", func() any { d, ok := classify.ParseRetryAfter("", time.Time{}); return [2]any{d, ok} }, [2]any{time.Duration(0), false}},
		{"a nil *StatusError reads as such", func() any { return nilStatus.Error() }, "http <nil>"},
		{"a nil *StatusError has status 0", func() any { return nilStatus.HTTPStatusCode() }, 0},
		{"a nil *StatusError asks no wait", func() any { return nilStatus.RetryAfter() }, time.Duration(0)},
		{"a nil *StatusError is no sentinel", func() any { return nilStatus.Is(classify.ErrSpendCap) }, false},
		{"a nil *StatusError gets no opinion", func() any { return classify.Default(nilStatus) }, classify.Decision{}},
		{"the zero StatusError", func() any { return (&classify.StatusError{}).Error() }, "http 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.call())
		})
	}
}
