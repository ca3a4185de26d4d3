package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/idempotency"
)

// ready refuses a Store not made by New and a nil context.
func (s *Store) ready(ctx context.Context, method string) error {
	name := "postgres.Store." + method
	switch {
	case s == nil || s.pool == nil:
		return invalid(name, nil, "the Store must be made by New")
	case ctx == nil:
		return invalid(name, nil, "the context must not be nil")
	}
	return nil
}

// check refuses, before any work, what ready refuses, an empty key, and a
// lease or retention under the microsecond the store counts in.
func (s *Store) check(ctx context.Context, method string, key idempotency.StoreKey, d time.Duration) error {
	if err := s.ready(ctx, method); err != nil {
		return err
	}
	name := "postgres.Store." + method
	switch {
	case key.Key == "":
		return invalid(name, `""`, "the key must not be empty")
	case d < time.Microsecond:
		return invalid(name, d, "the lease or retention must be at least 1µs")
	}
	return nil
}

// checkToken is check for a method that names the claim by its token.
func (s *Store) checkToken(ctx context.Context, method string, key idempotency.StoreKey, token string, d time.Duration) error {
	if err := s.check(ctx, method, key, d); err != nil {
		return err
	}
	if token == "" {
		return invalid("postgres.Store."+method, token, "the token must not be empty")
	}
	return nil
}

// checkRecord is check for a method given a record.
func (s *Store) checkRecord(ctx context.Context, method string, key idempotency.StoreKey, rec idempotency.Record, d time.Duration) error {
	if err := s.check(ctx, method, key, d); err != nil {
		return err
	}
	if err := rec.Validate(); err != nil {
		return invalid("postgres.Store."+method, rec.Status, "bad record: "+err.Error())
	}
	return nil
}

// checkFinal is checkRecord for a final record.
func (s *Store) checkFinal(ctx context.Context, method string, key idempotency.StoreKey, rec idempotency.Record, d time.Duration) error {
	if !rec.Status.Final() {
		return invalid("postgres.Store."+method, rec.Status, "the record must be final")
	}
	return s.checkRecord(ctx, method, key, rec, d)
}

// invalid returns the *retry.InvalidError for a bad argument or option:
// "name(value): reason".
func invalid(name string, value any, reason string) error {
	return &retry.InvalidError{Name: name, Value: value, Err: errors.New(reason)}
}
