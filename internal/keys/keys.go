// Package keys holds the library's one rule set for idempotency keys, shared
// by the retry loop (retry.WithIdempotencyKey) and package idempotency
// (ValidateKey, the middleware, the HTTP client).
package keys

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxLength is the longest key accepted, in characters: the limit of Stripe
// and of LLM gateways.
const MaxLength = 255

// Validate reports why key is not usable: empty, not UTF-8, longer than
// MaxLength characters, or holding a control character.
func Validate(key string) error {
	if key == "" {
		return errors.New("must not be empty")
	}
	if !utf8.ValidString(key) {
		return errors.New("must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(key); n > MaxLength {
		return fmt.Errorf("%d characters: the limit is %d", n, MaxLength)
	}
	for _, r := range key {
		if unicode.IsControl(r) {
			return errors.New("must not contain control characters")
		}
	}
	return nil
}

// Abbreviate keeps error messages short: a key of more than 48 characters
// is cut to its first 40 and an ellipsis.
func Abbreviate(s string) string {
	const keep = 40
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
