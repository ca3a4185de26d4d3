package postgres_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/postgres"
	"github.com/retrykit/retry/internal/pgtest"
)

// proxied returns a pool on the database of direct that goes through a
// fault proxy, and the proxy; both close when t ends.
func proxied(t testing.TB, direct *pgxpool.Pool, maxConns int32) (*pgxpool.Pool, *pgtest.Proxy) {
	t.Helper()
	cc := direct.Config().ConnConfig
	proxy := pgtest.NewProxy(t, net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port))))
	cfg := direct.Config().Copy()
	host, port, _ := net.SplitHostPort(proxy.Addr)
	p, _ := strconv.Atoi(port)
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(p)
	cfg.MaxConns = maxConns
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool, proxy
}

// TestOwnAmbiguousCommitIsNotAReplay: the call's own COMMIT reply is lost
// and its Retrier does not retry the transaction (one attempt). The call
// then finds the key completed — by itself. fn ran once, in this call: the
// result is this call's own execution, not a replay of it.
func TestOwnAmbiguousCommitIsNotAReplay(t *testing.T) {
	direct := newPool(t, "", 2, nil)
	newStore(t, direct, postgres.Config{})
	pool, proxy := proxied(t, direct, 2)
	s, err := postgres.New(pool, postgres.Config{})
	require.NoError(t, err)
	ran := 0
	proxy.LoseCommitReply()
	res, err := s.Tx(t.Context(), newRetrier(t, retry.WithMaxAttempts(1)), pgx.TxOptions{}, "order-3", fingerprint,
		func(context.Context, pgx.Tx) ([]byte, error) {
			ran++
			return []byte("receipt"), nil
		})
	require.NoError(t, err)
	require.Equal(t, 1, proxy.Lost(), "the COMMIT reply was not lost: the test proved nothing")
	assert.Equal(t, 1, ran)
	assert.False(t, res.Replay, "fn ran in this call: its result is not a replay")
	assert.Empty(t, res.ReplayOf)
	assert.NotEmpty(t, res.Execution)
	assert.Equal(t, "receipt", string(res.Value))

	again, err := s.Tx(t.Context(), newRetrier(t), pgx.TxOptions{}, "order-3", fingerprint, nil2)
	require.NoError(t, err)
	assert.True(t, again.Replay, "another call with the key is a replay")
	assert.Equal(t, res.Execution, again.ReplayOf, "of the first call's execution")
}

// TestTxWaitsForAKeyInProgressAtMostMaxWait: a key that idempotency.Do
// holds (a live claim, here for a minute) makes Tx wait; with a context that
// never ends, Config.MaxWait bounds the wait, and Tx returns the retryable
// ErrInProgress without running fn.
func TestTxWaitsForAKeyInProgressAtMostMaxWait(t *testing.T) {
	pool := newPool(t, "", 2, nil)
	s := newStore(t, pool, postgres.Config{MaxWait: 200 * time.Millisecond})
	_, ok, err := s.Claim(t.Context(), idempotency.StoreKey{Key: "busy"},
		idempotency.Record{Status: idempotency.InProgress, Token: "other", Fingerprint: fingerprint}, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	start := time.Now()
	_, err = s.Tx(context.Background(), newRetrier(t), pgx.TxOptions{}, "busy", fingerprint, nil2)
	waited := time.Since(start)
	require.ErrorIs(t, err, idempotency.ErrInProgress)
	assert.GreaterOrEqual(t, waited, 200*time.Millisecond, "Tx gave up before MaxWait")
	assert.Less(t, waited, 200*time.Millisecond+time.Second, "Tx waited far past MaxWait")
	t.Logf("MaxWait 200ms: Tx returned after %v", waited)
}

// TestOwnAmbiguousCommitOfAResultTooLargeToKeepReturnsIt: a result over
// 1 MiB is recorded as not retained, and returned to its caller — also
// when the COMMIT's reply was lost and the retry finds the key completed by
// this call.
func TestOwnAmbiguousCommitOfAResultTooLargeToKeepReturnsIt(t *testing.T) {
	direct := newPool(t, "", 2, nil)
	newStore(t, direct, postgres.Config{})
	pool, proxy := proxied(t, direct, 2)
	s, err := postgres.New(pool, postgres.Config{})
	require.NoError(t, err)
	big := make([]byte, 1<<20+1)
	for i, r := range []*retry.Retrier{newRetrier(t), newRetrier(t, retry.WithMaxAttempts(1))} {
		key := fmt.Sprint("big-", i)
		proxy.LoseCommitReply()
		res, err := s.Tx(t.Context(), r, pgx.TxOptions{}, key, fingerprint, func(context.Context, pgx.Tx) ([]byte, error) { return big, nil })
		require.NoError(t, err)
		assert.False(t, res.Replay)
		assert.Len(t, res.Value, len(big), "the caller lost its own result")
	}
	require.Equal(t, 2, proxy.Lost(), "the COMMIT replies were not lost: the test proved nothing")
}
