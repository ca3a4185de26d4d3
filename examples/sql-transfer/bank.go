package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/postgres"
	"github.com/retrykit/retry/observe"
)

// The bank: accounts × initial money, moved by workers × perWorker transfers.
const (
	accounts  = 10
	initial   = 1000
	workers   = 8
	perWorker = 100
)

// table names of the example's own, dropped at the end.
const (
	accountsTable = "sql_transfer_accounts"
	keysTable     = "sql_transfer_keys"
)

type bank struct {
	pool      *pgxpool.Pool
	store     *postgres.Store
	r         *retry.Retrier
	conflicts atomic.Int64 // serialization failures retried
}

func openBank(ctx context.Context, url string) (*bank, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = workers + 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	b := &bank{pool: pool}
	if err := b.setUp(ctx); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// setUp creates the accounts and the idempotency table, and the Retrier:
// many attempts, short waits (a conflict clears in milliseconds), strict (a
// failure nobody recognises is not retried), counting serialization failures.
func (b *bank) setUp(ctx context.Context) (err error) {
	if b.store, err = postgres.New(b.pool, postgres.Config{Table: keysTable}); err != nil {
		return err
	}
	if err = b.store.Migrate(ctx); err != nil {
		return err
	}
	_, err = b.pool.Exec(ctx, `CREATE TABLE `+accountsTable+` (id int PRIMARY KEY, balance bigint NOT NULL CHECK (balance >= 0));
		INSERT INTO `+accountsTable+` SELECT g, `+strconv.Itoa(initial)+` FROM generate_series(1, `+strconv.Itoa(accounts)+`) g`)
	if err != nil {
		return err
	}
	b.r, err = retry.New(retry.Strict(), retry.WithMaxAttempts(100),
		retry.WithBackoff(backoff.Exponential{Base: time.Millisecond, MaxDelay: 20 * time.Millisecond}),
		retry.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
			if e.Kind == observe.RetryScheduled && e.Decision.Reason == classify.ReasonSerialization {
				b.conflicts.Add(1)
			}
		})))
	return err
}

// close drops the example's tables and closes the pool.
func (b *bank) close() {
	_, _ = b.pool.Exec(context.Background(), `DROP TABLE IF EXISTS `+accountsTable+`, `+keysTable)
	b.pool.Close()
}

// simulate runs the workers and prints the report.
func (b *bank) simulate(ctx context.Context, w io.Writer) error {
	fmt.Fprintf(w, "accounts: %d × %d = %d\n", accounts, initial, accounts*initial)
	var wg sync.WaitGroup
	var replays atomic.Int64
	errs := make(chan error, workers)
	for n := range workers {
		wg.Go(func() {
			if err := b.worker(ctx, n, &replays); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	total, err := b.total(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "transfers: %d committed (%d workers × %d, SERIALIZABLE), each with its idempotency key\n", workers*perWorker, workers, perWorker)
	fmt.Fprintf(w, "serialization failures retried: %d (whole transactions, from BEGIN)\n", b.conflicts.Load())
	fmt.Fprintf(w, "duplicates prevented: %d (every transfer submitted twice: the second got the first's receipt)\n", replays.Load())
	fmt.Fprintf(w, "total: %d (conserved: %v)\n", total, total == accounts*initial)
	return nil
}

// worker makes its transfers, submitting each one twice, as a client that
// timed out and tried again would.
func (b *bank) worker(ctx context.Context, n int, replays *atomic.Int64) error {
	rng := rand.New(rand.NewPCG(uint64(n), 2026))
	for i := range perWorker {
		t := newTransfer(rng, fmt.Sprintf("transfer-%d-%d", n, i))
		first, err := b.submit(ctx, t)
		if err != nil {
			return err
		}
		again, err := b.submit(ctx, t)
		if err != nil {
			return err
		}
		if !again.Replay || string(again.Value) != string(first.Value) {
			return fmt.Errorf("%s submitted again: %+v, want a replay of %q", t.key, again, first.Value)
		}
		replays.Add(1)
	}
	return nil
}

// transfer is one request: an amount from one account to another, under
// the client's idempotency key.
type transfer struct {
	key              string
	from, to, amount int
}

func newTransfer(rng *rand.Rand, key string) transfer {
	from := 1 + rng.IntN(accounts)
	to := 1 + (from+rng.IntN(accounts-1))%accounts
	return transfer{key: key, from: from, to: to, amount: 1 + rng.IntN(50)}
}

// submit runs the transfer at most once per key: the debit, the credit and
// the key's completion commit together.
func (b *bank) submit(ctx context.Context, t transfer) (idempotency.Result, error) {
	fp := idempotency.NewFingerprint([]byte(fmt.Sprintf("%d>%d:%d", t.from, t.to, t.amount)))
	return b.store.Tx(ctx, b.r, pgx.TxOptions{IsoLevel: pgx.Serializable}, t.key, fp,
		func(ctx context.Context, tx pgx.Tx) ([]byte, error) { return t.apply(ctx, tx) })
}

// apply moves the money if the payer can pay, writing the rows in the order
// of their ids (two transfers between the same accounts then conflict
// instead of deadlocking), and returns the receipt.
func (t transfer) apply(ctx context.Context, tx pgx.Tx) ([]byte, error) {
	var balance int
	if err := tx.QueryRow(ctx, `SELECT balance FROM `+accountsTable+` WHERE id = $1`, t.from).Scan(&balance); err != nil {
		return nil, err
	}
	if balance < t.amount {
		return []byte("declined: insufficient funds"), nil
	}
	first, second, delta := t.from, t.to, -t.amount
	if t.to < t.from {
		first, second, delta = t.to, t.from, t.amount
	}
	const move = `UPDATE ` + accountsTable + ` SET balance = balance + $2 WHERE id = $1`
	if _, err := tx.Exec(ctx, move, first, delta); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, move, second, -delta); err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "moved %d from %d to %d", t.amount, t.from, t.to), nil
}

func (b *bank) total(ctx context.Context) (int64, error) {
	var sum int64
	err := b.pool.QueryRow(ctx, `SELECT sum(balance) FROM `+accountsTable).Scan(&sum)
	return sum, err
}
