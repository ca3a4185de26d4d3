package idempotency

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/keys"
)

// The protocol as a client sees it: the key's header field, reading a key
// from a request, and what the server's answers mean. An HTTP client that sends
// Idempotency-Key (package httpretry) builds on these.

// HeaderKey is the request header field that carries the client's
// idempotency key (IETF draft-ietf-httpapi-idempotency-key-header; Stripe),
// as a token or a quoted structured-field string. KeyOf reads it.
const HeaderKey = "Idempotency-Key"

// The response header fields of a replay: "true", and the id of the
// original execution. ReplayOf reads them.
const (
	headerReplay   = "Idempotent-Replay"
	headerReplayOf = "Idempotent-Replay-Of"
)

// maxErrorBody is how much of an error response is read for its kind.
const maxErrorBody = 64 << 10

// KeyOf returns the idempotency key that h carries in its Idempotency-Key
// field — a bare token, as Stripe's clients send it, or a structured-field
// string (RFC 8941), as the IETF draft specifies — and "" with a nil error
// when h carries none (a nil h, no field, or an empty one). A key that breaks
// the rules — sent more than once, a malformed quoted string, or a key that
// ValidateKey refuses — is a *retry.InvalidError: the middleware answers it
// with 400, and a client must not send it.
func KeyOf(h http.Header) (string, error) {
	values := h.Values(HeaderKey)
	switch {
	case len(values) == 0 || len(values) == 1 && strings.TrimSpace(values[0]) == "":
		return "", nil
	case len(values) > 1:
		return "", badKeyHeader(strings.Join(values, ", "), errors.New("the field is sent more than once"))
	}
	key := strings.TrimSpace(values[0])
	if strings.HasPrefix(key, `"`) {
		var err error
		if key, err = parseSFString(key); err != nil {
			return "", badKeyHeader(values[0], err)
		}
	}
	if err := keys.Validate(key); err != nil {
		return "", badKeyHeader(values[0], err)
	}
	return key, nil
}

func badKeyHeader(value string, err error) error {
	return &retry.InvalidError{Name: "idempotency.KeyOf", Value: keys.Abbreviate(value), Err: err}
}

// parseSFString decodes a structured-field string: printable ASCII between
// double quotes, with \" and \\ escapes, and nothing after it.
func parseSFString(s string) (string, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
			if i == len(s) || (s[i] != '"' && s[i] != '\\') {
				return "", errors.New("bad escape in the quoted string")
			}
			b.WriteByte(s[i])
		case c == '"':
			if i != len(s)-1 {
				return "", errors.New("text after the quoted string")
			}
			return b.String(), nil
		case c < 0x20 || c > 0x7e:
			return "", errors.New("the quoted string must be printable ASCII")
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("unterminated quoted string")
}

// ResponseError returns the error an HTTP response with a status of 400 or
// more stands for, and nil for any other (or nil) response. It reads up to
// 64 KiB of the body to find the server's error kind — the "kind" or "code"
// member of the JSON body or of its "error" object, or the last segment of a
// problem "type" URI — and closes the body.
//
// The idempotency failures come back as an *Error whose Reason is
// ErrInProgress, ErrKeyReuse, ErrNotRetained, ErrScopeFull or
// ErrStoredFailure (a kept incomplete response) — or
// retry.ErrKeyRequired and retry.ErrInvalid for a server's 400 about the key
// — and whose Err is the *classify.StatusError; any other failure is the
// *classify.StatusError itself, with its Kind, for the classifiers to judge.
func ResponseError(resp *http.Response) error {
	if resp == nil || resp.StatusCode < 400 {
		return nil
	}
	var kind string
	if resp.Body != nil {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		kind = problemKind(head)
	}
	se := &classify.StatusError{Code: resp.StatusCode, Header: resp.Header, Kind: kind}
	reason := reasonOfKind(kind)
	if reason == nil {
		return se
	}
	var key string
	if resp.Request != nil {
		key, _ = KeyOf(resp.Request.Header)
	}
	return &Error{Reason: reason, Key: key, Err: se}
}

func reasonOfKind(kind string) error {
	switch kind {
	case kindInProgress:
		return ErrInProgress
	case kindKeyReuse:
		return ErrKeyReuse
	case kindNotRetained:
		return ErrNotRetained
	case kindScopeFull:
		return ErrScopeFull
	case kindIncomplete:
		return ErrStoredFailure
	case kindKeyMissing:
		return retry.ErrKeyRequired
	case kindKeyInvalid:
		return retry.ErrInvalid
	}
	return nil
}

// ReplayOf reports whether resp replays a stored response (the header
// Idempotent-Replay, or Stripe's Idempotent-Replayed, is "true") and, if the
// server says, the id of the original execution (Idempotent-Replay-Of). A
// nil resp is no replay.
func ReplayOf(resp *http.Response) (execution string, replay bool) {
	if resp == nil {
		return "", false
	}
	h := resp.Header
	if h.Get(headerReplay) != "true" && h.Get("Idempotent-Replayed") != "true" {
		return "", false
	}
	return h.Get(headerReplayOf), true
}

// Classify is the classifier for idempotent calls; give it to the retry loop
// with retry.WithClassifier. It recognises the idempotency failures in an
// error's chain — an *Error, or a *classify.StatusError whose Kind is one of
// the protocol's (see Problem kinds in the package documentation):
//
//	failure                                                 decision                         reason
//	ErrInProgress, kind idempotency-in-progress             retry, after Retry-After if any  classify.ReasonKeyInProgress
//	ErrKeyReuse, kind idempotency-key-reuse                 stop: never retried              classify.ReasonKeyReuse
//	ErrNotRetained, kind idempotency-response-not-retained  stop: it ran; nothing to replay  classify.ReasonNotRetained
//	ErrStoredFailure (a kept failure), kind                 stop: the window returns it      classify.ReasonStoredFailure
//	idempotency-response-incomplete
//	ErrClaimLost                                            stop                             classify.ReasonClaimLost
//
// and has no opinion on anything else (a failing store, or a 429 for a full
// scope, included: the underlying error or the status decides). A nil err
// has no opinion.
func Classify(err error) classify.Decision {
	switch reasonOf(err) {
	case ErrInProgress:
		return classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonKeyInProgress, RetryAfter: retryAfterOf(err)}
	case ErrKeyReuse:
		return classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonKeyReuse}
	case ErrNotRetained:
		return classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonNotRetained}
	case ErrStoredFailure:
		return classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonStoredFailure}
	case ErrClaimLost:
		return classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonClaimLost}
	}
	return classify.Decision{}
}

func reasonOf(err error) error {
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e.Reason
	}
	var se *classify.StatusError
	if errors.As(err, &se) && se != nil {
		return reasonOfKind(se.Kind)
	}
	return nil
}

func retryAfterOf(err error) time.Duration {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		return max(ra.RetryAfter(), 0)
	}
	return 0
}
