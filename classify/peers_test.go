package classify_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/stretchr/testify/assert"
)

// TestWhatPeersDecide ports the cases of hashicorp/go-retryablehttp's policy
// tests (TestDefaultRetryPolicy, TestClient_DefaultRetryPolicy_TLS,
// _redirects, _invalidscheme, _invalidheadername, _invalidheadervalue, and
// ErrorPropagatedRetryPolicy, which decides the same) and of failsafe-go's
// failsafehttp (NewRetryPolicyBuilder and its client tests): the failure each
// peer saw, what each decided, and what the retry loop decides in its default
// mode — Default, then the general fallback for what Default does not recognise.
//
// Every row where we differ is a choice the package documentation explains
// ("Compared with go-retryablehttp and failsafehttp").
func TestWhatPeersDecide(t *testing.T) {
	const retry, stop = "retry", "stop"
	loop := classify.Chain(classify.Default, general)
	tests := []struct {
		name          string
		err           error
		retryablehttp string // what DefaultRetryPolicy decides
		failsafehttp  string // what NewRetryPolicyBuilder's policy decides
		want          classify.Decision
	}{
		// Responses: retryablehttp retries 0, 429 and every 5xx but 501; failsafehttp 429 and every 5xx but 501.
		{"429", status(429, ""), retry, retry, decision(classify.Retry, classify.ReasonTooManyRequests)},
		{"500 (we retry it once per call)", status(500, ""), retry, retry, classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonServerError, Limit: 1}},
		{"501", status(501, ""), stop, stop, decision(classify.Stop, classify.ReasonNotImplemented)},
		{"502", status(502, ""), retry, retry, decision(classify.Retry, classify.ReasonBadGateway)},
		{"503", status(503, ""), retry, retry, decision(classify.Retry, classify.ReasonUnavailable)},
		{"504", status(504, ""), retry, retry, decision(classify.Retry, classify.ReasonGatewayTimeout)},
		{"505 (we stop: the server cannot do it)", status(505, ""), retry, retry, decision(classify.Stop, classify.ReasonNotImplemented)},
		{"511 (we stop: the network wants a login)", status(511, ""), retry, retry, decision(classify.Stop, classify.ReasonNotImplemented)},
		{"599 (we retry it once per call)", status(599, ""), retry, retry, classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonOtherServerError, Limit: 1}},
		{"401", status(401, ""), stop, stop, decision(classify.Stop, classify.ReasonClientError)},
		{"status 0 (not a response we make an error of)", status(0, ""), retry, stop, decision(classify.Retry, classify.ReasonUnclassified)},

		// Errors that can never succeed.
		{"x509.UnknownAuthorityError in a *url.Error", &url.Error{Op: "Get", URL: "https://x", Err: x509.UnknownAuthorityError{}}, stop, stop, decision(classify.Stop, classify.ReasonCertificate)},
		{"a *tls.CertificateVerificationError", &url.Error{Op: "Get", URL: "https://x", Err: &tls.CertificateVerificationError{Err: errors.New("x509: certificate signed by unknown authority")}}, stop, retry, decision(classify.Stop, classify.ReasonCertificate)},
		{"macOS: certificate is not trusted", &url.Error{Op: "Get", URL: "https://x", Err: &tls.CertificateVerificationError{Err: errors.New(`x509: “x” certificate is not trusted`)}}, stop, stop, decision(classify.Stop, classify.ReasonCertificate)},
		{"stopped after 10 redirects", &url.Error{Op: "Get", URL: "/", Err: errors.New("stopped after 10 redirects")}, stop, stop, decision(classify.Stop, classify.ReasonTooManyRedirects)},
		{"an unsupported protocol scheme", &url.Error{Op: "Get", URL: "rstp://localhost", Err: errors.New(`unsupported protocol scheme "rstp"`)}, stop, stop, decision(classify.Stop, classify.ReasonInvalidRequest)},
		{"an unsupported protocol scheme from a RoundTripper (no *url.Error)", errors.New(`unsupported protocol scheme "rstp"`), retry, stop, decision(classify.Stop, classify.ReasonInvalidRequest)},
		{"an invalid header name", &url.Error{Op: "Get", URL: "http://x", Err: errors.New(`net/http: invalid header field name "Header-Name-\x1b"`)}, stop, retry, decision(classify.Stop, classify.ReasonInvalidRequest)},
		{"an invalid header value", &url.Error{Op: "Get", URL: "http://x", Err: errors.New(`net/http: invalid header field value for "Header-Name"`)}, stop, retry, decision(classify.Stop, classify.ReasonInvalidRequest)},

		// Everything else.
		{"context.Canceled", &url.Error{Op: "Get", URL: "http://x", Err: context.Canceled}, stop, stop, decision(classify.Stop, classify.ReasonCanceled)},
		{"connection refused", &url.Error{Op: "Get", URL: "http://x", Err: opErr("dial", syscall.ECONNREFUSED)}, retry, retry, decision(classify.Retry, classify.ReasonConnRefused)},
		{"the server hung up", &url.Error{Op: "Get", URL: "http://x", Err: io.EOF}, retry, retry, decision(classify.Retry, classify.ReasonConnClosed)},
		{"an error nobody knows", errors.New("something else"), retry, retry, decision(classify.Retry, classify.ReasonUnclassified)},
		// retryablehttp stops when its context is done, before looking at the
		// error; our loop does the same before any classifier runs, and Default
		// alone sees only a timeout.
		{"a deadline (the loop checks the caller's context first)", &url.Error{Op: "Get", URL: "http://x", Err: context.DeadlineExceeded}, stop, retry, classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonTimeout, Timeout: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := loop(tt.err)
			assert.Equal(t, tt.want.Verdict, got.Verdict, "peers: retryablehttp %s, failsafehttp %s", tt.retryablehttp, tt.failsafehttp)
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("a Retry-After date is waited for (failsafehttp reads seconds only)", func(t *testing.T) {
		date := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
		d := loop(status(429, date))
		assert.Equal(t, classify.Retry, d.Verdict)
		assert.InDelta(t, float64(time.Hour), float64(d.RetryAfter), float64(2*time.Second))
	})
	t.Run("2xx and 3xx are no failure for anyone", func(t *testing.T) {
		for _, code := range []int{200, 301} {
			assert.NoError(t, classify.ResponseError(&http.Response{StatusCode: code}))
		}
	})
}

func decision(v classify.Verdict, reason string) classify.Decision {
	return classify.Decision{Verdict: v, Reason: reason}
}

// general is the retry loop's fallback in its default mode.
func general(error) classify.Decision {
	return classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnclassified}
}
