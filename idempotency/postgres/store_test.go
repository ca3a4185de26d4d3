package postgres_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/postgres"
	"github.com/retrykit/retry/idempotency/storetest"
	"github.com/retrykit/retry/internal/pgtest"
)

// statements counts the statements a pool sends (pgx's tracer sees each
// query, BEGIN and COMMIT included: one round trip each).
type statements struct{ n atomic.Int64 }

func (c *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// newPool opens a pool on url (a fresh database if empty), closed when t
// ends; if count is not nil it counts the pool's statements.
func newPool(t testing.TB, url string, maxConns int32, count *statements) *pgxpool.Pool {
	t.Helper()
	if url == "" {
		url = pgtest.DB(t)
	}
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	cfg.MaxConns = maxConns
	if count != nil {
		cfg.ConnConfig.Tracer = count
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

func newStore(t testing.TB, pool *pgxpool.Pool, cfg postgres.Config) *postgres.Store {
	t.Helper()
	s, err := postgres.New(pool, cfg)
	require.NoError(t, err)
	require.NoError(t, s.Migrate(context.Background()))
	return s
}

func TestConformance(t *testing.T) {
	pool := newPool(t, "", 30, nil)
	var n atomic.Int32
	storetest.Run(t, func(t *testing.T) idempotency.Store {
		// One database, a table of its own for each check.
		return newStore(t, pool, postgres.Config{Table: fmt.Sprintf("check_%d", n.Add(1))})
	})
}

func TestMigrateTwiceIsHarmless(t *testing.T) {
	pool := newPool(t, "", 2, nil)
	s := newStore(t, pool, postgres.Config{})
	require.NoError(t, s.Migrate(t.Context()))
	var indexes int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_indexes WHERE tablename = $1`, "retry_idempotency").Scan(&indexes))
	assert.Equal(t, 2, indexes, "the primary key and the expiry index")
}

func TestTheConfigChoosesTheTableAndTheRetention(t *testing.T) {
	tests := []struct {
		name      string
		cfg       postgres.Config
		table     string
		retention time.Duration
	}{
		{"the zero Config is retry_idempotency, 24h", postgres.Config{}, "retry_idempotency", 24 * time.Hour},
		{"a table of one's own, in a schema, and a retention", postgres.Config{Table: "billing.keys", Retention: time.Hour}, "billing.keys", time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool := newPool(t, "", 2, nil)
			_, err := pool.Exec(t.Context(), `CREATE SCHEMA billing`)
			require.NoError(t, err)
			s := newStore(t, pool, tt.cfg)
			_, err = s.Tx(t.Context(), newRetrier(t), pgx.TxOptions{}, "order-1", fingerprint, func(context.Context, pgx.Tx) ([]byte, error) {
				return []byte("receipt"), nil
			})
			require.NoError(t, err)
			var left float64
			require.NoError(t, pool.QueryRow(t.Context(),
				`SELECT extract(epoch FROM expires_at - clock_timestamp()) FROM `+tt.table+` WHERE key = 'order-1'`).Scan(&left))
			assert.InDelta(t, tt.retention.Seconds(), left, 60, "the result is kept for the retention")
			schema, name, qualified := strings.Cut(tt.table, ".")
			if !qualified {
				schema, name = "public", tt.table
			}
			assert.Equal(t, 2, count(t, pool, `SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND tablename = $2`, schema, name),
				"the primary key and the expiry index, in the table's schema")
		})
	}
}

func TestDeleteExpiredDeletesOnlyWhatExpired(t *testing.T) {
	pool := newPool(t, "", 2, nil)
	s := newStore(t, pool, postgres.Config{})
	ctx := t.Context()
	claim := func(key string, lease time.Duration) {
		_, ok, err := s.Claim(ctx, idempotency.StoreKey{Key: key}, idempotency.Record{Status: idempotency.InProgress, Token: "t-" + key}, lease)
		require.NoError(t, err)
		require.True(t, ok)
	}
	claim("short", time.Millisecond)
	claim("long", time.Minute)
	time.Sleep(5 * time.Millisecond)
	n, err := s.DeleteExpired(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
}

// TestStatementsPerCall counts round trips: a new key costs two statements
// (claim, complete), a replay one (the claim that finds the result).
func TestStatementsPerCall(t *testing.T) {
	var count statements
	s := newStore(t, newPool(t, "", 2, &count), postgres.Config{})
	fp := idempotency.NewFingerprint([]byte("order 1"))
	fn := func(context.Context) ([]byte, error) { return []byte("receipt-1"), nil }
	count.n.Store(0)
	res, err := idempotency.Do(t.Context(), s, "order-1", fp, fn)
	require.NoError(t, err)
	assert.False(t, res.Replay)
	assert.Equal(t, int64(2), count.n.Load(), "statements for a new key")
	count.n.Store(0)
	res, err = idempotency.Do(t.Context(), s, "order-1", fp, fn)
	require.NoError(t, err)
	assert.True(t, res.Replay)
	assert.Equal(t, "receipt-1", string(res.Value))
	assert.Equal(t, int64(1), count.n.Load(), "statements for a replay")
}

func newRetrier(t testing.TB, opts ...retry.Option) *retry.Retrier {
	t.Helper()
	r, err := retry.New(append([]retry.Option{retry.WithMaxAttempts(50),
		retry.WithBackoff(backoff.Exponential{Base: time.Millisecond, MaxDelay: 20 * time.Millisecond})}, opts...)...)
	require.NoError(t, err)
	return r
}

const effects = `CREATE TABLE effects (key text PRIMARY KEY, n int NOT NULL)`

// TestOneKeyHundredCallsOneRow is the proof of exactly-once: 100 concurrent
// calls with one key write one row, and all of them get its result; the
// 99 that did not commit get it as a replay. (Calls that started before the
// first committed ran fn too, in transactions that rolled back.)
func TestOneKeyHundredCallsOneRow(t *testing.T) {
	pool := newPool(t, "", 20, nil)
	s := newStore(t, pool, postgres.Config{})
	_, err := pool.Exec(t.Context(), effects)
	require.NoError(t, err)
	r := newRetrier(t)
	fp := idempotency.NewFingerprint([]byte("transfer 7"))
	var ran atomic.Int32
	var wg sync.WaitGroup
	results := make([]idempotency.Result, 100)
	errs := make([]error, 100)
	for i := range 100 {
		wg.Go(func() {
			results[i], errs[i] = s.Tx(t.Context(), r, pgx.TxOptions{}, "transfer-7", fp, func(ctx context.Context, tx pgx.Tx) ([]byte, error) {
				ran.Add(1)
				_, err := tx.Exec(ctx, `INSERT INTO effects VALUES ('transfer-7', 1)`)
				return []byte("done"), err
			})
		})
	}
	wg.Wait()
	replays := 0
	for i := range 100 {
		require.NoError(t, errs[i])
		assert.Equal(t, "done", string(results[i].Value))
		if results[i].Replay {
			replays++
		}
	}
	assert.Equal(t, 99, replays)
	t.Logf("fn ran %d times for 100 calls; one committed", ran.Load())
	var rows int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM effects`).Scan(&rows))
	assert.Equal(t, 1, rows)
}

// TestTxStatements: the transactional form adds two statements to the
// transaction (lookup, completed record) for a new key, and a replay is one.
func TestTxStatements(t *testing.T) {
	var count statements
	pool := newPool(t, "", 2, &count)
	s := newStore(t, pool, postgres.Config{})
	_, err := pool.Exec(t.Context(), effects)
	require.NoError(t, err)
	r := newRetrier(t)
	fp := idempotency.NewFingerprint([]byte("x"))
	effect := func(ctx context.Context, tx pgx.Tx) ([]byte, error) {
		_, err := tx.Exec(ctx, `INSERT INTO effects VALUES ('k', 1)`)
		return []byte("ok"), err
	}
	count.n.Store(0)
	_, err = s.Tx(t.Context(), r, pgx.TxOptions{}, "k", fp, effect)
	require.NoError(t, err)
	assert.Equal(t, int64(5), count.n.Load(), "lookup, BEGIN, the effect, the completed record, COMMIT")
	count.n.Store(0)
	res, err := s.Tx(t.Context(), r, pgx.TxOptions{}, "k", fp, effect)
	require.NoError(t, err)
	assert.True(t, res.Replay)
	assert.Equal(t, int64(1), count.n.Load(), "a replay is the lookup alone")
}

func TestTxFailureRollsBackAndFreesTheKey(t *testing.T) {
	pool := newPool(t, "", 3, nil)
	s := newStore(t, pool, postgres.Config{})
	_, err := pool.Exec(t.Context(), effects)
	require.NoError(t, err)
	r := newRetrier(t, retry.Strict())
	fp := idempotency.NewFingerprint([]byte("x"))
	boom := fmt.Errorf("card declined")
	_, err = s.Tx(t.Context(), r, pgx.TxOptions{}, "k", fp, func(ctx context.Context, tx pgx.Tx) ([]byte, error) {
		_, err := tx.Exec(ctx, `INSERT INTO effects VALUES ('k', 1)`)
		require.NoError(t, err)
		return nil, boom
	})
	require.ErrorIs(t, err, boom)
	res, err := s.Tx(t.Context(), r, pgx.TxOptions{}, "k", fp, func(ctx context.Context, tx pgx.Tx) ([]byte, error) {
		_, err := tx.Exec(ctx, `INSERT INTO effects VALUES ('k', 2)`)
		return []byte("second"), err
	})
	require.NoError(t, err, "the key was not freed")
	assert.False(t, res.Replay)
	var n int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT n FROM effects`).Scan(&n))
	assert.Equal(t, 2, n, "the failed attempt's effect committed")
}

func TestTxKeyReuseIsRefused(t *testing.T) {
	s := newStore(t, newPool(t, "", 2, nil), postgres.Config{})
	r := newRetrier(t)
	noop := func(context.Context, pgx.Tx) ([]byte, error) { return []byte("a"), nil }
	_, err := s.Tx(t.Context(), r, pgx.TxOptions{}, "k", idempotency.NewFingerprint([]byte("a")), noop)
	require.NoError(t, err)
	_, err = s.Tx(t.Context(), r, pgx.TxOptions{}, "k", idempotency.NewFingerprint([]byte("b")), noop)
	require.ErrorIs(t, err, idempotency.ErrKeyReuse)
}

// TestAmbiguousCommitThatCommittedIsNotRepeated: the server commits the
// effect and the key's completion, and the reply is lost with the
// connection. The transaction is keyed, so it is retried; the retry finds
// the key completed by this call, runs nothing, and returns the result as
// this call's own.
func TestAmbiguousCommitThatCommittedIsNotRepeated(t *testing.T) {
	direct := newPool(t, "", 2, nil)
	newStore(t, direct, postgres.Config{}) // migrates
	_, err := direct.Exec(t.Context(), effects)
	require.NoError(t, err)
	cc := direct.Config().ConnConfig
	proxy := pgtest.NewProxy(t, net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port))))
	cfg := direct.Config().Copy()
	host, port, _ := net.SplitHostPort(proxy.Addr)
	p, _ := strconv.Atoi(port)
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(p)
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	require.NoError(t, err)
	defer pool.Close()
	s, err := postgres.New(pool, postgres.Config{})
	require.NoError(t, err)
	ran := 0
	proxy.LoseCommitReply()
	res, err := s.Tx(t.Context(), newRetrier(t), pgx.TxOptions{}, "transfer-9", fingerprint, func(ctx context.Context, tx pgx.Tx) ([]byte, error) {
		ran++
		return transfer9(ctx, tx)
	})
	require.NoError(t, err)
	assert.Equal(t, 1, proxy.Lost(), "the COMMIT reply was not lost: the test proved nothing")
	assert.Equal(t, 1, ran, "the effect ran again after its commit")
	assert.False(t, res.Replay, "the result is this call's own execution")
	assert.Equal(t, "ok", string(res.Value))
	assert.Equal(t, 1, count(t, direct, `SELECT count(*) FROM effects`))
}
