package sqlretry_test

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/pgtest"
	"github.com/retrykit/retry/observe"
)

// newPool opens a pgx pool on a fresh database, closed when t ends.
func newPool(t testing.TB, maxConns int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = maxConns
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// newDB opens a database/sql handle on a fresh database, closed when t ends.
func newDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// exec runs statements outside any retry, failing t on error.
func exec(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// retries counts the retries a Retrier schedules, by reason.
type retries struct{ serialization, deadlock, other atomic.Int64 }

func (c *retries) hook(_ context.Context, e observe.Event) {
	if e.Kind != observe.RetryScheduled {
		return
	}
	switch e.Decision.Reason {
	case classify.ReasonSerialization:
		c.serialization.Add(1)
	case classify.ReasonDeadlock:
		c.deadlock.Add(1)
	default:
		c.other.Add(1)
	}
}

// newRetrier returns a Retrier for contended transactions: many attempts,
// short waits (the conflicts clear in milliseconds).
func newRetrier(t testing.TB, c *retries, opts ...retry.Option) *retry.Retrier {
	t.Helper()
	opts = append([]retry.Option{
		retry.WithMaxAttempts(100),
		retry.WithBackoff(backoff.Exponential{Base: time.Millisecond, MaxDelay: 20 * time.Millisecond}),
		retry.WithObserver(observe.Func(c.hook)),
	}, opts...)
	r, err := retry.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
