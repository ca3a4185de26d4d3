package sqlretry_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/sqlretry"
)

// TestNilArgumentsAreInvalid walks every exported function with nil
// arguments: each returns a *retry.InvalidError naming it, before doing any
// work, and never panics. No database is needed: nothing may be opened.
func TestNilArgumentsAreInvalid(t *testing.T) {
	r, err := retry.New()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", "postgres://nobody@127.0.0.1:1/none") // opens nothing until used
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg, err := pgxpool.ParseConfig("postgres://nobody@127.0.0.1:1/none")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg) // connects lazily
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ran := false
	sqlFn := func(context.Context, *sql.Tx) error { ran = true; return nil }
	pgxFn := func(context.Context, pgx.Tx) error { ran = true; return nil }
	ctx := context.Background()
	var nilCtx context.Context
	tests := []struct {
		name string
		call func() error
	}{
		{"Tx with a nil context", func() error { _, err := sqlretry.Tx(nilCtx, r, db, nil, sqlFn); return err }},
		{"Tx with a nil Retrier", func() error { _, err := sqlretry.Tx(ctx, nil, db, nil, sqlFn); return err }},
		{"Tx with a nil database", func() error { _, err := sqlretry.Tx(ctx, r, nil, nil, sqlFn); return err }},
		{"Tx with a nil fn", func() error { _, err := sqlretry.Tx(ctx, r, db, nil, nil); return err }},
		{"PgxTx with a nil context", func() error { _, err := sqlretry.PgxTx(nilCtx, r, pool, pgx.TxOptions{}, pgxFn); return err }},
		{"PgxTx with a nil Retrier", func() error { _, err := sqlretry.PgxTx(ctx, nil, pool, pgx.TxOptions{}, pgxFn); return err }},
		{"PgxTx with a nil pool", func() error { _, err := sqlretry.PgxTx(ctx, r, nil, pgx.TxOptions{}, pgxFn); return err }},
		{"PgxTx with a nil fn", func() error { _, err := sqlretry.PgxTx(ctx, r, pool, pgx.TxOptions{}, nil); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is invalid", func(t *testing.T) {
			err := tt.call()
			assert.ErrorIs(t, err, retry.ErrInvalid)
			var inv *retry.InvalidError
			if assert.True(t, errors.As(err, &inv)) {
				assert.Regexp(t, `^sqlretry\.(Pgx)?Tx$`, inv.Name)
			}
			assert.False(t, ran, "fn ran")
			assert.Zero(t, pool.Stat().TotalConns(), "a connection was opened")
		})
	}
}
