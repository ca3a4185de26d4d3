package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/postgres"
)

// TestInvalidArguments walks every exported function and method with nil and
// zero arguments: each returns a *retry.InvalidError before doing any work
// (the pool points nowhere and is never used), and none panics.
func TestInvalidArguments(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none")
	require.NoError(t, err)
	defer pool.Close()
	s, err := postgres.New(pool, postgres.Config{})
	require.NoError(t, err)
	var zero postgres.Store
	r, err := retry.New()
	require.NoError(t, err)
	ctx := context.Background()
	var nilCtx context.Context
	key := idempotency.StoreKey{Key: "k"}
	claim := idempotency.Record{Status: idempotency.InProgress, Token: "t"}
	done := idempotency.Record{Status: idempotency.Succeeded, Token: "t"}
	ran := false
	fn := func(context.Context, pgx.Tx) ([]byte, error) { ran = true; return nil, nil }
	tests := []struct {
		name string
		call func() error
	}{
		{"New with a nil pool", func() error { _, err := postgres.New(nil, postgres.Config{}); return err }},
		{"Config.Table with a name that needs quoting", func() error {
			_, err := postgres.New(pool, postgres.Config{Table: "a-b; DROP"})
			return err
		}},
		{"Config.Table in upper case", func() error { _, err := postgres.New(pool, postgres.Config{Table: "Orders"}); return err }},
		{"Config.Retention under 1ms", func() error {
			_, err := postgres.New(pool, postgres.Config{Retention: time.Microsecond})
			return err
		}},
		{"Config.Retention negative", func() error {
			_, err := postgres.New(pool, postgres.Config{Retention: -time.Second})
			return err
		}},
		{"Config.MaxWait under 1ms", func() error {
			_, err := postgres.New(pool, postgres.Config{MaxWait: time.Microsecond})
			return err
		}},
		{"Config.MaxWait negative", func() error {
			_, err := postgres.New(pool, postgres.Config{MaxWait: -time.Second})
			return err
		}},
		{"Migrate with a nil context", func() error { return s.Migrate(nilCtx) }},
		{"Migrate on a zero Store", func() error { return zero.Migrate(ctx) }},
		{"DeleteExpired with a nil context", func() error { _, err := s.DeleteExpired(nilCtx); return err }},
		{"Claim with a nil context", func() error { _, _, err := s.Claim(nilCtx, key, claim, time.Second); return err }},
		{"Claim on a zero Store", func() error { _, _, err := zero.Claim(ctx, key, claim, time.Second); return err }},
		{"Claim with an empty key", func() error { _, _, err := s.Claim(ctx, idempotency.StoreKey{}, claim, time.Second); return err }},
		{"Claim with a zero lease", func() error { _, _, err := s.Claim(ctx, key, claim, 0); return err }},
		{"Claim with a zero record", func() error { _, _, err := s.Claim(ctx, key, idempotency.Record{}, time.Second); return err }},
		{"Claim with a final record", func() error { _, _, err := s.Claim(ctx, key, done, time.Second); return err }},
		{"Extend with an empty token", func() error { return s.Extend(ctx, key, "", time.Second) }},
		{"Extend with a zero lease", func() error { return s.Extend(ctx, key, "t", 0) }},
		{"Complete with a claim", func() error { return s.Complete(ctx, key, claim, time.Second) }},
		{"Complete with a zero retention", func() error { return s.Complete(ctx, key, done, 0) }},
		{"Release with an empty token", func() error { return s.Release(ctx, key, "") }},
		{"Release on a zero Store", func() error { return zero.Release(ctx, key, "t") }},
		{"Tx with a nil context", func() error {
			_, err := s.Tx(nilCtx, r, pgx.TxOptions{}, "k", idempotency.Fingerprint{}, fn)
			return err
		}},
		{"Tx with a nil Retrier", func() error {
			_, err := s.Tx(ctx, nil, pgx.TxOptions{}, "k", idempotency.Fingerprint{}, fn)
			return err
		}},
		{"Tx with a nil fn", func() error { _, err := s.Tx(ctx, r, pgx.TxOptions{}, "k", idempotency.Fingerprint{}, nil); return err }},
		{"Tx with an empty key", func() error { _, err := s.Tx(ctx, r, pgx.TxOptions{}, "", idempotency.Fingerprint{}, fn); return err }},
		{"Tx on a zero Store", func() error {
			_, err := zero.Tx(ctx, r, pgx.TxOptions{}, "k", idempotency.Fingerprint{}, fn)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is invalid", func(t *testing.T) {
			assert.ErrorIs(t, tt.call(), retry.ErrInvalid)
			assert.False(t, ran, "fn ran")
			assert.Zero(t, pool.Stat().TotalConns(), "a connection was opened")
		})
	}
}

func TestInvalidConfigErrorsNameTheFieldAndTheValue(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none")
	require.NoError(t, err)
	defer pool.Close()
	_, err = postgres.New(pool, postgres.Config{Table: "a-b"})
	assert.EqualError(t, err, "postgres.Config.Table(a-b): must be a lower-case SQL name ([a-z_][a-z0-9_]*, optionally schema.name)")
	_, err = postgres.New(pool, postgres.Config{Retention: -time.Second})
	assert.EqualError(t, err, "postgres.Config.Retention(-1s): must be at least 1ms (0 means 24h)")
}
