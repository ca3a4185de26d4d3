// Package argerr holds the error that every package of the module returns for
// an invalid argument, option or configuration field.
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
	form  form
}

// form is how Error writes the name and the value.
type form uint8

const (
	call   form = iota // Name(Value): Err
	field              // Name = Value: Err
	nested             // Name: Err, where Err names the value
)

// Error returns "retry: WithMaxAttempts(0): must be at least 1" for an option
// or argument; a name qualified by its package ("dlq.Replay") stands for
// itself, without the "retry: " prefix. A field reads as an assignment:
// "backoff.Exponential.Factor = 0.5: must be at least 1 (or 0 for the
// default 2)".
func (e *Error) Error() string {
	switch {
	case e.form == field:
		return fmt.Sprintf("%s = %v: %v", e.Name, e.Value, e.Err)
	case e.form == nested:
		return fmt.Sprintf("%s: %v", e.Name, e.Err)
	case strings.Contains(e.Name, "."):
		return fmt.Sprintf("%s(%v): %v", e.Name, e.Value, e.Err)
	}
	return fmt.Sprintf("retry: %s(%v): %v", e.Name, e.Value, e.Err)
}

// Unwrap returns ErrInvalid and the underlying error.
func (e *Error) Unwrap() []error { return []error{ErrInvalid, e.Err} }

// New reports a bad argument or option: "name(value): reason".
func New(name string, value any, reason string) *Error {
	return &Error{Name: name, Value: value, Err: errors.New(reason)}
}

// Field reports a bad field of a struct: "name = value: reason".
func Field(name string, value any, reason string) *Error {
	return &Error{Name: name, Value: value, Err: errors.New(reason), form: field}
}

// Nested reports a field whose value is itself invalid, as err says:
// "name: err".
func Nested(name string, value any, err error) *Error {
	return &Error{Name: name, Value: value, Err: err, form: nested}
}
