package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/sqlite"
)

// TestEveryCallRefusesNilAndZeroArguments walks what the conformance suite's
// "invalid arguments" test does not: Open, and the methods of a nil and of a
// zero Queue. Each returns a *retry.InvalidError, creates no file and
// enqueues nothing.
func TestEveryCallRefusesNilAndZeroArguments(t *testing.T) {
	ctx := context.Background()
	var nilCtx context.Context
	var nilQ *sqlite.Queue
	zero := new(sqlite.Queue)
	l := letter("1")
	enqueued := 0
	to := dlq.EnqueueFunc(func(context.Context, dlq.Job) error { enqueued++; return nil })
	path := filepath.Join(t.TempDir(), "dlq.db")
	tests := []struct {
		name string
		call func() error
	}{
		{"Open with a nil context", func() error { _, err := sqlite.Open(nilCtx, path, sqlite.Config{}); return err }},
		{"Open of an empty path", func() error { _, err := sqlite.Open(ctx, "", sqlite.Config{}); return err }},
	}
	for name, q := range map[string]*sqlite.Queue{"a nil Queue": nilQ, "a zero Queue": zero} {
		tests = append(tests, []struct {
			name string
			call func() error
		}{
			{name + "'s Close", func() error { return q.Close() }},
			{name + "'s Put", func() error { _, err := q.Put(ctx, l); return err }},
			{name + "'s Get", func() error { _, err := q.Get(ctx, l.ID); return err }},
			{name + "'s List", func() error { _, err := q.List(ctx, dlq.Filter{}); return err }},
			{name + "'s Count", func() error { _, err := q.Count(ctx, dlq.Filter{}); return err }},
			{name + "'s Replay", func() error { return q.Replay(ctx, l.ID, to) }},
			{name + "'s Discard", func() error { return q.Discard(ctx, l.ID) }},
			{name + "'s Purge", func() error { _, err := q.Purge(ctx, dlq.Filter{}); return err }},
		}...)
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused before any work", func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, retry.ErrInvalid) {
				t.Fatalf("%s = %v; want retry.ErrInvalid", tt.name, err)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) || enqueued != 0 {
				t.Fatalf("%s created %s (%v) or enqueued %d jobs", tt.name, path, err, enqueued)
			}
		})
	}
}
