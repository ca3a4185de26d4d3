package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retry/idempotency/postgres"
	"github.com/retrykit/retry/internal/faultproxy"
)

// Outages between the store and PostgreSQL, made by a fault proxy, while
// callers run keyed transactions with 300ms deadlines. Each checks what
// the package documentation promises: no call blocks past its deadline
// (plus 100ms), no acknowledged effect is lost or done twice — a call that
// failed may have committed, and its retry with the key replays it — and
// calls succeed again within a second of the outage's end (the pool
// replaces its broken connections on demand).

const (
	outageDeadline = 300 * time.Millisecond
	outageMargin   = 100 * time.Millisecond
)

func TestOutagesEndEveryCallByItsDeadlineLoseNothingAndRecoverAtOnce(t *testing.T) {
	outages := []struct {
		name  string
		apply func(*faultproxy.Proxy)
	}{
		{"a hung server", func(p *faultproxy.Proxy) { p.Set(faultproxy.Faults{BlackHole: true}) }},
		{"resets in the middle of replies", func(p *faultproxy.Proxy) { p.Set(faultproxy.Faults{Reset: true, ResetAfter: 3}) }},
		{"a server gone", func(p *faultproxy.Proxy) { p.Set(faultproxy.Faults{Refuse: true}); p.ResetAll() }},
		{"replies later than the deadline", func(p *faultproxy.Proxy) { p.Set(faultproxy.Faults{Latency: 2 * outageDeadline}) }},
		{"connections the server closed, learned late", nil}, // see below
	}
	for _, o := range outages {
		t.Run(o.name, func(t *testing.T) {
			direct := newPool(t, "", 4, nil)
			newStore(t, direct, postgres.Config{}) // migrates
			_, err := direct.Exec(t.Context(), effects)
			require.NoError(t, err)
			pool, proxy := proxied(t, direct, 8)
			s, err := postgres.New(pool, postgres.Config{})
			require.NoError(t, err)

			apply := o.apply
			if apply == nil { // the server ends every session (as a restart does); the client learns it late
				apply = func(p *faultproxy.Proxy) {
					p.Set(faultproxy.Faults{SlowClose: 2 * outageDeadline})
					_, err := direct.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
						WHERE datname = current_database() AND pid <> pg_backend_pid()`)
					assert.NoError(t, err)
				}
			}
			run := outageRun{store: s}
			run.during(t, func() { apply(proxy.Proxy) }, func() { proxy.Set(faultproxy.Faults{}) })

			over, worst := run.log.Overshoot()
			assert.LessOrEqual(t, over, outageMargin, "a call blocked %v past its deadline (%v)", over, worst.Err)
			recovered, ok := run.log.Recovery()
			if assert.True(t, ok, "no call succeeded after the outage") {
				assert.LessOrEqual(t, recovered, time.Second, "service came back %v after the outage ended", recovered)
			}
			t.Logf("worst: %v", worst.Err)
			acked, failed := run.check(t, direct)
			t.Logf("%d calls: %d acknowledged, %d failed (%d of those had committed); worst overshoot %v (deadlines noticed up to %v late); recovered %v after the outage",
				len(run.log.Calls()), acked, len(run.failed), failed, over, run.log.Lateness(), recovered)
		})
	}
}

// outageRun is a fleet of callers, each running keyed transactions one
// after another, each with a key of its own.
type outageRun struct {
	store *postgres.Store
	log   faultproxy.Log

	mu     sync.Mutex
	acked  map[string]string // key → the value the caller was given
	failed []string
}

// during runs 4 callers for 300ms, then through the outage (start; 600ms;
// end) and for 600ms after it.
func (o *outageRun) during(t *testing.T, start, end func()) {
	o.acked = map[string]string{}
	r := newRetrier(t)
	o.log.Through(start, end, 600*time.Millisecond, func(key string) error {
		var res []byte
		err := o.log.Do(context.Background(), outageDeadline, func(ctx context.Context) error {
			got, err := o.store.Tx(ctx, r, pgx.TxOptions{}, key, fingerprint, effect(key))
			res = got.Value
			return err
		}).Err
		o.mu.Lock()
		defer o.mu.Unlock()
		if err == nil {
			o.acked[key] = string(res)
		} else {
			o.failed = append(o.failed, key)
		}
		return err
	})
}

// effect inserts the key's row and returns its value.
func effect(key string) func(context.Context, pgx.Tx) ([]byte, error) {
	return func(ctx context.Context, tx pgx.Tx) ([]byte, error) {
		_, err := tx.Exec(ctx, `INSERT INTO effects VALUES ($1, 1)`, key)
		return []byte("done " + key), err
	}
}

// check asserts that every acknowledged key's effect is in the database
// once, with the value its caller got, and that every failed key, called
// again, replays its effect if it had committed and runs it if not: once in
// all. It returns how many keys were acknowledged, and how many failed
// calls had committed.
func (o *outageRun) check(t *testing.T, direct *pgxpool.Pool) (acked, committed int) {
	t.Helper()
	rows := func(key string) int { return count(t, direct, `SELECT count(*) FROM effects WHERE key = $1`, key) }
	for key, v := range o.acked {
		assert.Equal(t, "done "+key, v)
		assert.Equal(t, 1, rows(key), "the effect of acknowledged key %s", key)
	}
	r := newRetrier(t)
	for _, key := range o.failed {
		before := rows(key)
		res, err := o.store.Tx(t.Context(), r, pgx.TxOptions{}, key, fingerprint, effect(key))
		require.NoError(t, err, "the retry of %s", key)
		assert.Equal(t, "done "+key, string(res.Value))
		assert.Equal(t, before == 1, res.Replay, "key %s: a committed effect is replayed, one that was not runs", key)
		assert.Equal(t, 1, rows(key), "the effect of key %s, once", key)
		committed += before
	}
	assert.Equal(t, len(o.acked)+len(o.failed), count(t, direct, `SELECT count(*) FROM effects`), "one effect per key")
	return len(o.acked), committed
}
