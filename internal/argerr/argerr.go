// Package argerr holds the error that every package of the module returns for
// an invalid argument, option or configuration.
//
// The leaf packages (backoff, jitter, classify, policy, budget and the
// cenkalti adapter) are imported by the root package retry, so they cannot
// return its *retry.InvalidError by importing it. They return an *Error from
// here instead, which the root re-exports (type InvalidError = argerr.Error,
// ErrInvalid = argerr.ErrInvalid): one type and one sentinel, whichever
// package reports the mistake.
package argerr

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is matched by every *Error.
var ErrInvalid = errors.New("invalid option or argument")

// Error reports a bad option, argument or field, naming it and its value.
// It matches ErrInvalid.
type Error struct {
	Name  string // the option, argument or field, e.g. "WithMaxAttempts" or "backoff.Exponential.Factor"
	Value any    // the value given
	Err   error  // what is wrong with it
}

// Error returns "retry: WithMaxAttempts(0): must be at least 1". A name
// qualified by its package ("budget.RatioConfig.Percent") stands for itself,
// without the "retry: " prefix.
func (e *Error) Error() string {
	if strings.Contains(e.Name, ".") {
		return fmt.Sprintf("%s(%v): %v", e.Name, e.Value, e.Err)
	}
	return fmt.Sprintf("retry: %s(%v): %v", e.Name, e.Value, e.Err)
}

// Unwrap returns ErrInvalid and the underlying error.
func (e *Error) Unwrap() []error { return []error{ErrInvalid, e.Err} }

// New returns an *Error whose Err says reason.
func New(name string, value any, reason string) *Error {
	return &Error{Name: name, Value: value, Err: errors.New(reason)}
}
