package classify

import (
	"net/http"
	"strconv"
	"time"
)

// StatusError is an HTTP response with an error status, as an error. The
// retry loop reads its status and, for 429 and 503, its Retry-After header.
// Its methods accept a nil *StatusError, which has status 0.
type StatusError struct {
	Code   int         // the status code, e.g. 503
	Header http.Header // the response header; may be nil
	// Kind is the API's own error code from the response body, when the
	// caller parsed one, e.g. KindUpstreamError; it refines the status.
	Kind string
}

// ResponseError returns a *StatusError for a response whose status is 400 or
// above, and nil otherwise (including for a nil response). It keeps a
// reference to resp.Header; it does not read or close the body.
func ResponseError(resp *http.Response) error {
	if resp == nil || resp.StatusCode < 400 {
		return nil
	}
	return &StatusError{Code: resp.StatusCode, Header: resp.Header}
}

// Error returns "http 503 Service Unavailable", followed by the kind when
// there is one: "http 502 Bad Gateway (upstream-error)".
func (e *StatusError) Error() string {
	if e == nil {
		return "http <nil>"
	}
	s := "http " + strconv.Itoa(e.Code)
	if text := http.StatusText(e.Code); text != "" {
		s += " " + text
	}
	if e.Kind != "" {
		s += " (" + e.Kind + ")"
	}
	return s
}

// HTTPStatusCode returns e.Code.
func (e *StatusError) HTTPStatusCode() int {
	if e == nil {
		return 0
	}
	return e.Code
}

// RetryAfter returns the wait asked for by the response: the
// retry-after-ms header in milliseconds (sent by OpenAI and Azure for waits
// under a second), else the Retry-After header as ParseRetryAfter reads it at
// the current time; 0 if absent or invalid.
func (e *StatusError) RetryAfter() time.Duration {
	if e == nil || e.Header == nil {
		return 0
	}
	if ms := e.Header.Get("Retry-After-Ms"); ms != "" {
		if d, ok := parseMillis(ms); ok {
			return d
		}
	}
	v := e.Header.Get("Retry-After")
	if d, ok := parseDelta(v); ok {
		return d // delta-seconds need no clock
	}
	d, _ := ParseRetryAfter(v, time.Now())
	return d
}

// httpRule classifies errors that carry an HTTP status (a method
// HTTPStatusCode() int anywhere in the chain) by the table of the package
// documentation. For 429 and 503 it also reads Retry-After (a method
// RetryAfter() time.Duration anywhere in the chain).
func (f *facts) httpRule() Decision {
	if f.status == nil {
		return Decision{}
	}
	code := f.status.HTTPStatusCode()
	d := statusDecision(code)
	if f.retryAfter != nil && (code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable) {
		d.RetryAfter = max(f.retryAfter.RetryAfter(), 0)
	}
	return d
}

// Status classifies an HTTP status code alone; codes below 400 get no opinion.
func statusDecision(code int) Decision {
	switch {
	case code < 400:
		return Decision{}
	case code == http.StatusTooManyRequests:
		return Decision{Verdict: Retry, Reason: ReasonTooManyRequests}
	case code < 500:
		return Decision{Verdict: Stop, Reason: ReasonClientError}
	}
	switch code {
	case http.StatusInternalServerError:
		return Decision{Verdict: Retry, Reason: ReasonServerError, Limit: 1}
	case http.StatusBadGateway:
		return Decision{Verdict: Retry, Reason: ReasonBadGateway}
	case http.StatusServiceUnavailable:
		return Decision{Verdict: Retry, Reason: ReasonUnavailable}
	case http.StatusGatewayTimeout:
		return Decision{Verdict: Retry, Reason: ReasonGatewayTimeout}
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported,
		http.StatusVariantAlsoNegotiates, http.StatusLoopDetected,
		http.StatusNotExtended, http.StatusNetworkAuthenticationRequired:
		return Decision{Verdict: Stop, Reason: ReasonNotImplemented}
	}
	return Decision{Verdict: Retry, Reason: ReasonOtherServerError, Limit: 1}
}
