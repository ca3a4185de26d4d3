package idempotency

import (
	"errors"
	"net/http"
	"strings"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/internal/keys"
)

// KeyOf returns the idempotency key that a request's header carries in its
// Idempotency-Key field — a bare token or a structured-field string, read
// as the middleware reads it — or "" and nil when it carries none. A key the
// library does not accept (ValidateKey), a malformed quoted string or a field
// sent twice is a *retry.InvalidError: a client checks it before sending.
func KeyOf(h http.Header) (string, error) {
	values := h.Values(HeaderKey)
	if len(values) == 0 || len(values) == 1 && strings.TrimSpace(values[0]) == "" {
		return "", nil
	}
	key, err := parseKeyHeader(values)
	if err == nil {
		return key, nil
	}
	if errors.Is(err, retry.ErrInvalid) {
		return "", err
	}
	return "", &retry.InvalidError{Name: "idempotency.KeyOf", Value: keys.Abbreviate(strings.Join(values, ", ")), Err: err}
}
