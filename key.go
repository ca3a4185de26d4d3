package retry

import (
	"context"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxKeyLength is the longest idempotency key accepted, in characters: the
// limit of Stripe and of LLM gateways, checked before anything is sent.
const MaxKeyLength = 255

type keyContext struct{}

// WithIdempotencyKey returns a context that marks the call made with it as
// carrying key, so that a timed-out attempt may be retried: the server
// recognises the repeated key and does not run the work twice. The operation
// reads the key with IdempotencyKey and sends it; the same key goes with every
// attempt of the call.
//
// The key must be non-empty, at most MaxKeyLength characters and free of
// control characters; otherwise ctx is returned with an *InvalidError.
func WithIdempotencyKey(ctx context.Context, key string) (context.Context, error) {
	if err := validateKey(key); err != nil {
		return ctx, &InvalidError{Name: "WithIdempotencyKey", Value: abbreviate(key), Err: err}
	}
	return context.WithValue(ctx, keyContext{}, key), nil
}

// ValidateKey reports whether key is usable as an idempotency key: non-empty,
// valid UTF-8, at most MaxKeyLength characters and free of control
// characters. The error is an *InvalidError naming the key (abbreviated).
func ValidateKey(key string) error {
	if err := validateKey(key); err != nil {
		return &InvalidError{Name: "idempotency key", Value: abbreviate(key), Err: err}
	}
	return nil
}

// IdempotencyKey returns the key set by WithIdempotencyKey, if any.
func IdempotencyKey(ctx context.Context) (string, bool) {
	key, ok := ctx.Value(keyContext{}).(string)
	return key, ok
}

func validateKey(key string) error {
	if key == "" {
		return errors.New("must not be empty")
	}
	if !utf8.ValidString(key) {
		return errors.New("must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(key); n > MaxKeyLength {
		return fmt.Errorf("%d characters: the limit is %d", n, MaxKeyLength)
	}
	for _, r := range key {
		if unicode.IsControl(r) {
			return errors.New("must not contain control characters")
		}
	}
	return nil
}

// abbreviate keeps error messages short when a key is too long.
func abbreviate(s string) string {
	const keep = 32
	if utf8.RuneCountInString(s) <= keep+8 {
		return s
	}
	n := 0
	for i := range s {
		if n == keep {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
