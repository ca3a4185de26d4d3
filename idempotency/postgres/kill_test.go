package postgres_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/postgres"
)

// childEnv carries the database URL to the child of
// TestKilledBetweenEffectAndCompletion.
const childEnv = "RETRY_POSTGRES_KILL_CHILD"

// TestKilledBetweenEffectAndCompletion is the proof of the issue: a child
// process runs a keyed transfer and is killed (SIGKILL) after its effect and
// before the key's completion. No effect is committed without its key, and
// nothing of the dead call is left; a retry with the key does the effect
// once and completes the key, at once.
func TestKilledBetweenEffectAndCompletion(t *testing.T) {
	if url := os.Getenv(childEnv); url != "" {
		effectThenHang(url)
		return
	}
	pool := newPool(t, "", 4, nil)
	s := newStore(t, pool, postgres.Config{})
	_, err := pool.Exec(t.Context(), effects)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledBetweenEffectAndCompletion$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+pool.Config().ConnString())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(out)
	for lines.Scan() && lines.Text() != "effect done" {
	}
	require.NoError(t, cmd.Process.Kill()) // SIGKILL, between the effect and the completion
	err = cmd.Wait()
	require.ErrorContains(t, err, "killed")

	assert.Equal(t, 0, count(t, pool, `SELECT count(*) FROM effects`), "an effect committed without its key")
	assert.Equal(t, 0, count(t, pool, `SELECT count(*) FROM retry_idempotency`), "a key recorded without its effect")

	r := newRetrier(t)
	res, err := s.Tx(t.Context(), r, pgx.TxOptions{}, "transfer-9", fingerprint, transfer9)
	require.NoError(t, err)
	assert.False(t, res.Replay)
	assert.Equal(t, 1, count(t, pool, `SELECT count(*) FROM effects`))
	assert.Equal(t, 1, count(t, pool, `SELECT count(*) FROM retry_idempotency WHERE status = $1`, int(idempotency.Succeeded)))
}

var fingerprint = idempotency.NewFingerprint([]byte("transfer 9"))

func transfer9(ctx context.Context, tx pgx.Tx) ([]byte, error) {
	_, err := tx.Exec(ctx, `INSERT INTO effects VALUES ('transfer-9', 1)`)
	return []byte("ok"), err
}

// effectThenHang is the child: it does the effect, says so, and waits to
// be killed before the completion.
func effectThenHang(url string) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err == nil {
		var s *postgres.Store
		var r *retry.Retrier
		s, err = postgres.New(pool, postgres.Config{})
		if err == nil {
			r, err = retry.New()
		}
		if err == nil {
			_, err = s.Tx(ctx, r, pgx.TxOptions{}, "transfer-9", fingerprint, func(ctx context.Context, tx pgx.Tx) ([]byte, error) {
				v, err := transfer9(ctx, tx)
				if err == nil {
					fmt.Println("effect done")
					select {} // killed here
				}
				return v, err
			})
		}
	}
	fmt.Fprintln(os.Stderr, "child:", err)
	os.Exit(2)
}

func count(t testing.TB, pool *pgxpool.Pool, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), query, args...).Scan(&n))
	return n
}
