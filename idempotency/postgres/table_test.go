package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/postgres"
)

// TestTablesNamedLikeKeywordsWorkInEveryStatement: a table name is quoted
// wherever the store writes it, so a name that is also an SQL keyword, in a
// schema or not, works in Migrate (table and expiry index, in the table's
// schema), in every statement of the Store interface, in Tx and in
// DeleteExpired.
func TestTablesNamedLikeKeywordsWorkInEveryStatement(t *testing.T) {
	for _, table := range []string{"billing.order", "user", "select.from", "billing.idempotency"} {
		t.Run(table, func(t *testing.T) {
			pool := newPool(t, "", 2, nil)
			schema, name, qualified := strings.Cut(table, ".")
			if qualified {
				_, err := pool.Exec(t.Context(), `CREATE SCHEMA "`+schema+`"`)
				require.NoError(t, err)
			} else {
				schema, name = "public", table
			}
			s := newStore(t, pool, postgres.Config{Table: table})
			require.NoError(t, s.Migrate(t.Context()), "a second Migrate")
			assert.Equal(t, 2, count(t, pool, `SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND tablename = $2`, schema, name),
				"the primary key and the expiry index, in the table's schema")

			fp := idempotency.NewFingerprint([]byte("order 1"))
			res, err := idempotency.Do(t.Context(), s, "do-1", fp, func(context.Context) ([]byte, error) { return []byte("done"), nil })
			require.NoError(t, err)
			assert.False(t, res.Replay)
			res, err = s.Tx(t.Context(), newRetrier(t), pgx.TxOptions{}, "tx-1", fp, func(context.Context, pgx.Tx) ([]byte, error) {
				return []byte("receipt"), nil
			})
			require.NoError(t, err)
			assert.Equal(t, "receipt", string(res.Value))
			res, err = s.Tx(t.Context(), newRetrier(t), pgx.TxOptions{}, "tx-1", fp, nil2)
			require.NoError(t, err)
			assert.True(t, res.Replay)

			key := idempotency.StoreKey{Key: "short"}
			_, ok, err := s.Claim(t.Context(), key, idempotency.Record{Status: idempotency.InProgress, Token: "t"}, time.Millisecond)
			require.NoError(t, err)
			require.True(t, ok)
			time.Sleep(5 * time.Millisecond)
			n, err := s.DeleteExpired(t.Context())
			require.NoError(t, err)
			assert.Equal(t, int64(1), n)
			quoted := `"` + schema + `"."` + name + `"`
			assert.Equal(t, 2, count(t, pool, `SELECT count(*) FROM `+quoted), "do-1 and tx-1 are in the table")
		})
	}
}

// nil2 is a Tx function that must not run: its key is completed.
func nil2(context.Context, pgx.Tx) ([]byte, error) { panic("ran for a completed key") }
