// Package sqlbench measures what keys cost in PostgreSQL: the statements of
// a keyed call (idempotency.Do on idempotency/postgres: a new key, a
// replay), and the throughput of transfers made exactly-once with
// postgres.Store.Tx against the same transfers through sqlretry.PgxTx
// without keys. It needs the PostgreSQL server binaries (internal/pgtest
// starts a server); without them the benchmarks are skipped.
//
//	go test -run '^$' -bench . -benchtime 200ms -count 3 ./sql
package sqlbench

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/postgres"
	"github.com/retrykit/retry/internal/pgtest"
	"github.com/retrykit/retry/sqlretry"
)

// TestMain stops the benchmarks' PostgreSQL when they end.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m).Run()) }

// statements counts the statements a pool sends: one round trip each.
type statements struct{ n atomic.Int64 }

func (c *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func setUp(b *testing.B) (*pgxpool.Pool, *postgres.Store, *statements, *retry.Retrier) {
	b.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.DB(b))
	if err != nil {
		b.Fatal(err)
	}
	var count statements
	cfg.ConnConfig.Tracer = &count
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	store, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		b.Fatal(err)
	}
	if err := store.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	_, err = pool.Exec(context.Background(), `CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL);
		INSERT INTO accounts SELECT g, 1000000 FROM generate_series(1, 1000) g`)
	if err != nil {
		b.Fatal(err)
	}
	r, err := retry.New(retry.WithMaxAttempts(100), retry.WithBackoff(backoff.Exponential{Base: time.Millisecond, MaxDelay: 20 * time.Millisecond}))
	if err != nil {
		b.Fatal(err)
	}
	return pool, store, &count, r
}

// keys numbers the new keys of every benchmark run.
var keys atomic.Int64

// BenchmarkKeyedCall: idempotency.Do on the Postgres store, a new key each
// time and a replay of one key; stmts/op is the round trips per call.
func BenchmarkKeyedCall(b *testing.B) {
	_, store, count, _ := setUp(b)
	fn := func(context.Context) ([]byte, error) { return []byte("receipt"), nil }
	fp := idempotency.NewFingerprint([]byte("request"))
	b.Run("new-key", func(b *testing.B) {
		count.n.Store(0)
		for b.Loop() {
			res, err := idempotency.Do(context.Background(), store, fmt.Sprintf("new-%d", keys.Add(1)), fp, fn)
			if err != nil || res.Replay {
				b.Fatal(res, err)
			}
		}
		b.ReportMetric(float64(count.n.Load())/float64(b.N), "stmts/op")
	})
	b.Run("replay", func(b *testing.B) {
		if _, err := idempotency.Do(context.Background(), store, "replayed", fp, fn); err != nil {
			b.Fatal(err)
		}
		count.n.Store(0)
		for b.Loop() {
			res, err := idempotency.Do(context.Background(), store, "replayed", fp, fn)
			if err != nil || !res.Replay {
				b.Fatal(res, err)
			}
		}
		b.ReportMetric(float64(count.n.Load())/float64(b.N), "stmts/op")
	})
}

// BenchmarkTransfer: the same transfers (a read, two writes, among 1000
// accounts, from parallel goroutines, SERIALIZABLE) through sqlretry.PgxTx
// without a key, and through postgres.Store.Tx with a new key each.
func BenchmarkTransfer(b *testing.B) {
	pool, store, count, r := setUp(b)
	opts := pgx.TxOptions{IsoLevel: pgx.Serializable}
	b.Run("unkeyed", func(b *testing.B) {
		count.n.Store(0)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				n := keys.Add(1)
				_, err := sqlretry.PgxTx(context.Background(), r, pool, opts, func(ctx context.Context, tx pgx.Tx) error {
					_, err := transfer(ctx, tx, n)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.ReportMetric(float64(count.n.Load())/float64(b.N), "stmts/op")
	})
	b.Run("keyed", func(b *testing.B) {
		count.n.Store(0)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				n := keys.Add(1)
				key := fmt.Sprintf("transfer-%d", n)
				_, err := store.Tx(context.Background(), r, opts, key, idempotency.Fingerprint{}, func(ctx context.Context, tx pgx.Tx) ([]byte, error) {
					return transfer(ctx, tx, n)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.ReportMetric(float64(count.n.Load())/float64(b.N), "stmts/op")
	})
}

// transfer n moves 1 between two accounts chosen by n, lower id first.
func transfer(ctx context.Context, tx pgx.Tx, n int64) ([]byte, error) {
	a, c := 1+n*7%1000, 1+(n*7+1+n%13)%1000
	first, second := min(a, c), max(a, c)
	var balance int64
	if err := tx.QueryRow(ctx, `SELECT balance FROM accounts WHERE id = $1`, a).Scan(&balance); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance - 1 WHERE id = $1`, first); err != nil {
		return nil, err
	}
	_, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance + 1 WHERE id = $1`, second)
	return []byte("ok"), err
}
