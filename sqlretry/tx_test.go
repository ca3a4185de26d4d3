package sqlretry_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/pgtest"
	"github.com/retrykit/retry/sqlretry"
)

var serializable = pgx.TxOptions{IsoLevel: pgx.Serializable}

// TestTransfersUnderSerializableAllCommit is the proof of the issue: 16
// goroutines make 500 transfers each among 10 accounts under SERIALIZABLE;
// every transfer commits, the total is conserved, and serialization failures
// were retried (there must be some, or the test proved nothing).
func TestTransfersUnderSerializableAllCommit(t *testing.T) {
	const workers, perWorker, accounts, initial = 16, 500, 10, 1000
	pool := newPool(t, workers+1)
	exec(t, pool, `CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL CHECK (balance >= 0))`)
	exec(t, pool, `INSERT INTO accounts SELECT g, $1 FROM generate_series(1, $2) g`, initial, accounts)
	var counts retries
	r := newRetrier(t, &counts)
	start := time.Now()
	var wg sync.WaitGroup
	var attempts, waited atomic.Int64
	errs := make(chan error, workers*perWorker)
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 16))
			for range perWorker {
				from, to, amount := pick(rng, accounts)
				st, err := sqlretry.PgxTx(t.Context(), r, pool, serializable, func(ctx context.Context, tx pgx.Tx) error {
					return transfer(ctx, tx, from, to, amount)
				})
				attempts.Add(int64(st.Attempts))
				waited.Add(int64(st.Waited))
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a transfer did not commit: %v", err)
	}
	t.Logf("%d transfers in %v (%d attempts, %v waited between them in all): %d serialization failures and %d deadlocks retried, %d other retries",
		workers*perWorker, time.Since(start).Round(time.Millisecond), attempts.Load(), time.Duration(waited.Load()).Round(time.Millisecond),
		counts.serialization.Load(), counts.deadlock.Load(), counts.other.Load())
	assert.Equal(t, int64(accounts*initial), total(t, pool), "money was created or destroyed")
	assert.Positive(t, counts.serialization.Load(), "no serialization failure happened: the test proved nothing")
	assert.Zero(t, counts.other.Load(), "retries for other reasons than serialization and deadlock")
}

// pick chooses two different accounts and an amount.
func pick(rng *rand.Rand, accounts int) (from, to, amount int) {
	from = 1 + rng.IntN(accounts)
	to = 1 + (from+rng.IntN(accounts-1))%accounts
	return from, to, 1 + rng.IntN(10)
}

// transfer moves amount from one account to another if the first can pay:
// a read then two writes, the shape serializable isolation protects. The
// rows are written in the order of their ids, so that two transfers between
// the same accounts conflict (40001) instead of deadlocking (40P01, which
// PostgreSQL detects only after deadlock_timeout, a second).
func transfer(ctx context.Context, tx pgx.Tx, from, to, amount int) error {
	var balance int
	if err := tx.QueryRow(ctx, `SELECT balance FROM accounts WHERE id = $1`, from).Scan(&balance); err != nil {
		return err
	}
	if balance < amount {
		return nil
	}
	first, second, delta := from, to, -amount
	if to < from {
		first, second, delta = to, from, amount
	}
	if _, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance + $2 WHERE id = $1`, first, delta); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance + $2 WHERE id = $1`, second, -delta)
	return err
}

func total(t testing.TB, pool *pgxpool.Pool) int64 {
	t.Helper()
	var sum int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT sum(balance) FROM accounts`).Scan(&sum))
	return sum
}

// testError wraps fn's errors, as cockroach-go's test does, to check that
// the classifier looks through wrapping.
type testError struct{ cause error }

func (e testError) Error() string { return "test error" }
func (e testError) Unwrap() error { return e.cause }

// TestWriteSkewIsRetried is cockroach-go's TestExecuteTx (crdb's
// ExecuteTxGenericTest) ported: two transactions read both balances, wait for
// each other, then move 100 in opposite directions; one must be retried, and
// the balances end where they began. PostgreSQL needs SERIALIZABLE for it
// (CockroachDB's default); under READ COMMITTED both commit and the total
// breaks.
func TestWriteSkewIsRetried(t *testing.T) {
	db := newDB(t)
	for _, q := range []string{`CREATE TABLE t (acct int PRIMARY KEY, balance int)`, `INSERT INTO t VALUES (1, 100), (2, 100)`} {
		_, err := db.Exec(q)
		require.NoError(t, err)
	}
	r := newRetrier(t, new(retries))
	opts := &sql.TxOptions{Isolation: sql.LevelSerializable}
	var wg, both sync.WaitGroup
	both.Add(2)
	iters := [2]int{}
	errs := [2]error{}
	for i := range 2 {
		wg.Go(func() {
			_, errs[i] = sqlretry.Tx(t.Context(), r, db, opts, func(ctx context.Context, tx *sql.Tx) (err error) {
				defer func() {
					if err != nil {
						err = testError{err}
					}
				}()
				iters[i]++
				b1, b2, err := balances(ctx, tx)
				if err != nil {
					return err
				}
				if iters[i] == 1 {
					both.Done()
					both.Wait()
				}
				delta := 100
				if b1 > b2 {
					delta = -100
				}
				if _, err := tx.ExecContext(ctx, `UPDATE t SET balance = balance + $1 WHERE acct = 1`, delta); err != nil {
					return err
				}
				_, err = tx.ExecContext(ctx, `UPDATE t SET balance = balance - $1 WHERE acct = 2`, delta)
				return err
			})
		})
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	assert.Greater(t, iters[0]+iters[1], 2, "expected at least one retry between the competing transactions")
	var b1, b2 int
	_, err := sqlretry.Tx(t.Context(), r, db, opts, func(ctx context.Context, tx *sql.Tx) (err error) {
		b1, b2, err = balances(ctx, tx)
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, [2]int{100, 100}, [2]int{b1, b2}, "balances not restored")
}

func balances(ctx context.Context, tx *sql.Tx) (b1, b2 int, err error) {
	err = tx.QueryRowContext(ctx, `SELECT (SELECT balance FROM t WHERE acct = 1), (SELECT balance FROM t WHERE acct = 2)`).Scan(&b1, &b2)
	return b1, b2, err
}

func TestPanicRollsBackAndRepanics(t *testing.T) {
	pool := newPool(t, 2)
	exec(t, pool, `CREATE TABLE t (id int)`)
	r := newRetrier(t, new(retries))
	calls := 0
	func() {
		defer func() {
			assert.Equal(t, "boom", recover(), "the panic did not go on up")
		}()
		_, _ = sqlretry.PgxTx(t.Context(), r, pool, pgx.TxOptions{}, func(ctx context.Context, tx pgx.Tx) error {
			calls++
			if _, err := tx.Exec(ctx, `INSERT INTO t VALUES (1)`); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	assert.Equal(t, 1, calls, "a panic is not retried")
	assert.Equal(t, 0, count(t, pool, `SELECT count(*) FROM t`), "the panicking transaction committed")
	assert.Equal(t, int32(0), pool.Stat().AcquiredConns(), "the connection was not given back")
}

func TestFnErrorRollsBackAndIsClassifiedByTheRetrier(t *testing.T) {
	pool := newPool(t, 2)
	exec(t, pool, `CREATE TABLE t (id int PRIMARY KEY)`)
	exec(t, pool, `INSERT INTO t VALUES (1)`)
	r := newRetrier(t, new(retries))
	calls := 0
	st, err := sqlretry.PgxTx(t.Context(), r, pool, pgx.TxOptions{}, func(ctx context.Context, tx pgx.Tx) error {
		calls++
		if _, err := tx.Exec(ctx, `INSERT INTO t VALUES (2)`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO t VALUES (1)`) // a unique violation: 23505, never retried
		return err
	})
	require.ErrorIs(t, err, retry.ErrPermanent)
	assert.Equal(t, classify.ReasonIntegrity, err.(*retry.Error).Decision.Reason)
	assert.Equal(t, 1, calls)
	assert.Equal(t, 1, st.Attempts)
	assert.Equal(t, 1, count(t, pool, `SELECT count(*) FROM t`), "the failed transaction's first insert committed")
}

// TestServerAnswerAtCommitIsNotAmbiguous: a deferred constraint fails at
// COMMIT; the server answered, so nothing committed and the error is the
// server's (cockroach-go's ExecuteInTx calls every non-retryable error at
// commit ambiguous).
func TestServerAnswerAtCommitIsNotAmbiguous(t *testing.T) {
	pool := newPool(t, 2)
	exec(t, pool, `CREATE TABLE t (id int, CONSTRAINT u UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)`)
	r := newRetrier(t, new(retries))
	_, err := sqlretry.PgxTx(t.Context(), r, pool, pgx.TxOptions{}, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO t VALUES (1), (1)`)
		return err
	})
	require.ErrorIs(t, err, retry.ErrPermanent)
	assert.NotErrorIs(t, err, sqlretry.ErrAmbiguousCommit)
	assert.Equal(t, classify.ReasonIntegrity, err.(*retry.Error).Decision.Reason)
}

// TestConnectionLostBeforeCommitIsRetried: the server ends the session in
// the middle of the transaction (57P01, as a restart or an administrator
// does). Nothing committed, so the transaction is retried even though the
// Retrier alone would retry a lost connection only for idempotent work.
func TestConnectionLostBeforeCommitIsRetried(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			pool := newPool(t, 3)
			exec(t, pool, `CREATE TABLE t (id int)`)
			var opts []retry.Option
			if strict {
				opts = append(opts, retry.Strict())
			}
			r := newRetrier(t, new(retries), opts...)
			calls := 0
			st, err := sqlretry.PgxTx(t.Context(), r, pool, pgx.TxOptions{}, func(ctx context.Context, tx pgx.Tx) error {
				calls++
				if _, err := tx.Exec(ctx, `INSERT INTO t VALUES (1)`); err != nil {
					return err
				}
				if calls == 1 {
					terminate(t, pool, backendPID(t, tx))
				}
				_, err := tx.Exec(ctx, `INSERT INTO t VALUES (2)`)
				return err
			})
			require.NoError(t, err)
			assert.Equal(t, 2, st.Attempts)
			assert.Equal(t, 2, count(t, pool, `SELECT count(*) FROM t`), "rows of the lost attempt were kept, or the retry's lost")
		})
	}
}

// atCommitWaiter makes COMMIT of a transaction that inserted into t wait
// for advisory lock 42: a deferred constraint trigger runs at COMMIT, before
// the commit record, and takes the lock the test holds. The test then
// terminates the backend while it waits in COMMIT.
const atCommitWaiter = `
CREATE TABLE t (id int PRIMARY KEY);
CREATE FUNCTION wait_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_advisory_lock_shared(42); PERFORM pg_advisory_unlock_shared(42); RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON t DEFERRABLE INITIALLY DEFERRED
	FOR EACH ROW EXECUTE FUNCTION wait_at_commit();`

// TestConnectionLostDuringCommitIsAmbiguous is the proof of the issue: the
// connection is killed while COMMIT runs. The outcome is unknown to the
// client, so the call returns ErrAmbiguousCommit, unless the work is keyed
// or marked idempotent, when it is retried.
func TestConnectionLostDuringCommitIsAmbiguous(t *testing.T) {
	tests := []struct {
		name     string
		keyed    bool
		opts     []retry.Option
		retried  bool
		wantRows int
	}{
		{name: "unkeyed work gets the ambiguous-commit error"},
		{name: "keyed work is retried", keyed: true, retried: true, wantRows: 1},
		{name: "idempotent work is retried", opts: []retry.Option{retry.Idempotent()}, retried: true, wantRows: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool := newPool(t, 4)
			exec(t, pool, atCommitWaiter)
			r := newRetrier(t, new(retries), tt.opts...)
			unlock := lock42(t, pool)
			ctx := t.Context()
			if tt.keyed {
				ctx, _ = retry.WithIdempotencyKey(ctx, "transfer-1")
			}
			pids := make(chan uint32, 2)
			done := make(chan error, 1)
			var st retry.Stats
			go func() {
				var err error
				st, err = sqlretry.PgxTx(ctx, r, pool, pgx.TxOptions{}, func(ctx context.Context, tx pgx.Tx) error {
					pids <- backendPID(t, tx)
					_, err := tx.Exec(ctx, `INSERT INTO t VALUES (1)`)
					return err
				})
				done <- err
			}()
			pid := <-pids
			waitFor(t, pool, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock' AND query ILIKE 'commit%'`, pid)
			terminate(t, pool, pid)
			unlock()
			err := <-done
			if tt.retried {
				require.NoError(t, err)
				assert.Equal(t, 2, st.Attempts)
			} else {
				require.ErrorIs(t, err, sqlretry.ErrAmbiguousCommit)
				require.ErrorIs(t, err, retry.ErrNotIdempotent)
				assert.Equal(t, classify.ReasonAmbiguousCommit, err.(*retry.Error).Decision.Reason)
				assert.Equal(t, 1, st.Attempts)
			}
			assert.Equal(t, tt.wantRows, count(t, pool, `SELECT count(*) FROM t`))
		})
	}
}

// lock42 takes advisory lock 42 on a connection of its own, and returns
// the function that frees it and gives the connection back.
func lock42(t *testing.T, pool *pgxpool.Pool) (unlock func()) {
	t.Helper()
	c, err := pool.Acquire(t.Context())
	require.NoError(t, err)
	_, err = c.Exec(t.Context(), `SELECT pg_advisory_lock(42)`)
	require.NoError(t, err)
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			_, err := c.Exec(context.Background(), `SELECT pg_advisory_unlock(42)`)
			assert.NoError(t, err)
			c.Release()
		})
	}
	t.Cleanup(unlock)
	return unlock
}

func backendPID(t testing.TB, tx pgx.Tx) uint32 { return tx.Conn().PgConn().PID() }

// terminate ends backend pid from another connection and waits until it is
// gone.
func terminate(t testing.TB, pool *pgxpool.Pool, pid uint32) {
	t.Helper()
	exec(t, pool, `SELECT pg_terminate_backend($1)`, int64(pid))
	waitFor(t, pool, `SELECT 1 - count(*) FROM pg_stat_activity WHERE pid = $1`, pid)
}

// waitFor polls query (which counts something) until it returns 1.
func waitFor(t testing.TB, pool *pgxpool.Pool, query string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for count(t, pool, query, args...) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", query)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func count(t testing.TB, pool *pgxpool.Pool, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), query, args...).Scan(&n))
	return n
}

// TestCommitReplyLostIsAmbiguous: the server commits, and its reply is lost
// with the connection (a proxy drops it). The call cannot know the outcome:
// unkeyed, it returns ErrAmbiguousCommit, and the row is there.
func TestCommitReplyLostIsAmbiguous(t *testing.T) {
	direct := newPool(t, 2)
	exec(t, direct, `CREATE TABLE t (id int)`)
	proxy := pgtest.NewProxy(t, direct.Config().ConnConfig.Host+":"+strconv.Itoa(int(direct.Config().ConnConfig.Port)))
	cfg := direct.Config().Copy()
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = proxyHostPort(t, proxy.Addr)
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	require.NoError(t, err)
	defer pool.Close()
	r := newRetrier(t, new(retries))
	proxy.LoseCommitReply()
	st, err := sqlretry.PgxTx(t.Context(), r, pool, pgx.TxOptions{}, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO t VALUES (1)`)
		return err
	})
	require.ErrorIs(t, err, sqlretry.ErrAmbiguousCommit)
	require.ErrorIs(t, err, retry.ErrNotIdempotent)
	assert.Equal(t, 1, st.Attempts)
	assert.Equal(t, 1, proxy.Lost())
	assert.Equal(t, 1, count(t, direct, `SELECT count(*) FROM t`), "the server did commit")
}

func proxyHostPort(t testing.TB, addr string) (string, uint16) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	n, err := strconv.Atoi(port)
	require.NoError(t, err)
	return host, uint16(n)
}

// TestCommitReplyLostIsAmbiguousThroughDatabaseSQL is the same through
// database/sql (pgx's stdlib driver).
func TestCommitReplyLostIsAmbiguousThroughDatabaseSQL(t *testing.T) {
	direct := newPool(t, 2)
	exec(t, direct, `CREATE TABLE t (id int)`)
	cc := direct.Config().ConnConfig
	proxy := pgtest.NewProxy(t, net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port))))
	db, err := sql.Open("pgx", fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", cc.User, proxy.Addr, cc.Database))
	require.NoError(t, err)
	defer db.Close()
	proxy.LoseCommitReply()
	st, err := sqlretry.Tx(t.Context(), newRetrier(t, new(retries)), db, nil, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (1)`)
		return err
	})
	require.ErrorIs(t, err, sqlretry.ErrAmbiguousCommit)
	assert.Equal(t, 1, st.Attempts)
	assert.Equal(t, 1, proxy.Lost())
	assert.Equal(t, 1, count(t, direct, `SELECT count(*) FROM t`), "the server did commit")
}

// TestAttemptTimeoutBeforeCommitIsRetried: an attempt that runs out of its
// own time (retry.WithAttemptTimeout) before COMMIT committed nothing, so
// it is retried, although a timeout alone is retried only for idempotent
// work.
func TestAttemptTimeoutBeforeCommitIsRetried(t *testing.T) {
	pool := newPool(t, 3)
	exec(t, pool, `CREATE TABLE t (id int)`)
	r := newRetrier(t, new(retries), retry.WithAttemptTimeout(300*time.Millisecond))
	calls := 0
	st, err := sqlretry.PgxTx(t.Context(), r, pool, pgx.TxOptions{}, func(ctx context.Context, tx pgx.Tx) error {
		calls++
		if _, err := tx.Exec(ctx, `INSERT INTO t VALUES ($1)`, calls); err != nil {
			return err
		}
		if calls == 1 {
			_, err := tx.Exec(ctx, `SELECT pg_sleep(10)`) // outlives the attempt
			return err
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, st.Attempts)
	assert.Equal(t, 1, count(t, pool, `SELECT count(*) FROM t`), "the timed-out attempt's row committed, or the retry's was lost")
}
