// Command worker runs a queue worker on Redis: submissions are enqueued once
// per idempotency key, each delivered job is claimed by its id before it is
// processed (a redelivered message is processed once), failures are retried
// with backoff, jobs that fail for good go to a dead letter queue that alerts
// and groups them by root cause, and after "the fix" a replay sends them back,
// attempts reset, until every job is done exactly once.
//
//	go run ./examples/worker                   # starts its own redis-server: needs the binary
//	go run ./examples/worker -redis HOST:PORT  # uses yours, under keys of its own, deleted at the end
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/dlq"
	dlqredis "github.com/retrykit/retry/dlq/redis"
	"github.com/retrykit/retry/idempotency"
)

// workers is the size of the pool.
const workers = 3

func main() {
	addr := flag.String("redis", "", "address of the Redis to use (default: start a redis-server on a free loopback port)")
	logs := flag.Bool("log", false, "also print the library's log (each give-up, the dead letter queue's alerts) on stderr")
	flag.Parse()
	logger := slog.New(slog.DiscardHandler) // the story on stdout says what happened; the log only when asked for
	if *logs {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	}
	if err := run(context.Background(), os.Stdout, logger, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

// dropTime leaves the time out of log lines, for output that reads the same
// every run.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// run runs the example against the Redis at addr, or, if addr is empty,
// against a redis-server it starts and stops.
func run(ctx context.Context, w io.Writer, logger *slog.Logger, addr string) error {
	if addr == "" {
		srv, stop, err := startRedis()
		if err != nil {
			return err
		}
		defer stop()
		addr = srv.Addr
		fmt.Fprintf(w, "redis: no -redis given: started redis-server on %s (stopped on exit)\n", addr)
	}
	rdb := goredis.NewClient(&goredis.Options{Addr: addr})
	defer rdb.Close()
	d, err := newDemo(rdb, logger)
	if err != nil {
		return err
	}
	defer d.q.cleanup(context.WithoutCancel(ctx))
	for _, step := range []func(context.Context, io.Writer) error{
		d.enqueue, d.firstPass, d.redeliver, d.showDeadLetters, d.fixAndReplay, d.verify,
	} {
		if err := step(ctx, w); err != nil {
			return err
		}
	}
	return nil
}

// demo holds the parts of the example.
type demo struct {
	q       *jobQueue
	dead    *dlqredis.Queue
	monitor *dlq.Monitor // the dead letter queue, watched: what the pool writes to
	pool    *pool
	tr      *translator
	alerts  *alertLog
	jobs    []string // the ids of the jobs enqueued
}

func newDemo(rdb *goredis.Client, logger *slog.Logger) (*demo, error) {
	ns := "{worker-" + idempotency.NewKey()[:8] + "}:" // this run's keys: apart from anything else in the Redis
	q, err := newJobQueue(rdb, ns)
	if err != nil {
		return nil, err
	}
	dead, err := dlqredis.New(rdb, dlqredis.Config{Prefix: ns + "dlq:", SourceKey: func(source string) string { return ns + source }})
	if err != nil {
		return nil, err
	}
	alerts := &alertLog{}
	monitor, err := dlq.NewMonitor(dead.From(q.processing), // a letter stored leaves the processing list atomically
		dlq.MonitorConfig{Thresholds: dlq.Thresholds{Size: 3}, OnAlert: alerts.add, Logger: logger})
	if err != nil {
		return nil, err
	}
	// Backoff scaled down to run in a moment: a real worker waits seconds.
	r, err := retry.New(retry.WithMaxAttempts(3), retry.WithLogger(logger),
		retry.WithBackoff(backoff.Exponential{Base: 20 * time.Millisecond, MaxDelay: 200 * time.Millisecond}))
	if err != nil {
		return nil, err
	}
	tr := newTranslator()
	return &demo{q: q, dead: dead, monitor: monitor, pool: &pool{q: q, r: r, dead: monitor, tr: tr}, tr: tr, alerts: alerts}, nil
}

// documents are the clients' submissions, each under its own idempotency key.
func documents() []document {
	texts := []struct{ lang, text string }{
		{"es", "El pedido 4417 sale el lunes."}, {"fr", "La commande 4418 part mardi."},
		{"de", "Bestellung 4419 geht am Mittwoch raus."}, {"es", "El pedido 4420 llega el jueves."},
		{"fr", "La commande 4421 est retardée."}, {"de", "Bestellung 4422 ist storniert."},
		{"es", "El pedido 4423 está en camino."}, {"eu", "4424 eskaera ostiralean bidaliko da."},
		{"fr", "La commande 4425 est livrée."}, {"de", "Bestellung 4426 wird geprüft."},
	}
	docs := make([]document, len(texts))
	for i, t := range texts {
		docs[i] = document{Key: fmt.Sprintf("doc-%02d", i+1), Lang: t.lang, Text: t.text}
	}
	return docs
}

// enqueue submits every document, and two of them twice at the same time, as
// clients that retry before the first answer came back.
func (d *demo) enqueue(ctx context.Context, w io.Writer) error {
	docs := documents()
	submissions := append(docs, docs[3], docs[6])
	ids := make([]string, len(submissions))
	dups := make([]bool, len(submissions))
	errs := make([]error, len(submissions))
	var wg sync.WaitGroup
	for i, doc := range submissions {
		wg.Go(func() { ids[i], dups[i], errs[i] = d.q.enqueue(ctx, doc) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	duplicates := 0
	for i, id := range ids {
		if dups[i] {
			duplicates++
		} else {
			d.jobs = append(d.jobs, id)
		}
	}
	queued, _, err := d.q.lengths(ctx)
	fmt.Fprintf(w, "enqueue: %d submissions of %d documents → %d jobs queued, %d duplicates rejected (same key → same job id)\n",
		len(submissions), len(docs), queued, duplicates)
	return errors.Join(err, d.monitor.Check(ctx)) // the monitor's first look: growth counts from here
}

// firstPass runs the pool over the queue, with two acknowledgements lost.
func (d *demo) firstPass(ctx context.Context, w io.Writer) error {
	var ps pass
	ps.loseAcks.Store(2)
	if err := d.pool.drain(ctx, workers, &ps); err != nil {
		return err
	}
	fmt.Fprintf(w, "pass 1: %d workers took %d messages: %d done (%d after a retry), %d dead-lettered; %d acks lost (worker died before acknowledging)\n",
		workers, ps.taken.Load(), ps.done.Load(), ps.retried.Load(), ps.dead.Load(), ps.acksLost.Load())
	d.alerts.print(w, "")
	return nil
}

// redeliver has the reaper put the unacknowledged messages back, and the pool
// run again: the job ids are claimed, so nothing runs twice.
func (d *demo) redeliver(ctx context.Context, w io.Writer) error {
	n, err := d.q.requeue(ctx)
	if err != nil {
		return err
	}
	var ps pass
	if err := d.pool.drain(ctx, workers, &ps); err != nil {
		return err
	}
	fmt.Fprintf(w, "redelivery: %d unacknowledged messages delivered again → %d skipped (job id already claimed), %d processed again\n",
		n, ps.skipped.Load(), ps.done.Load()+ps.dead.Load())
	return nil
}

// showDeadLetters prints the dead letter queue by root cause.
func (d *demo) showDeadLetters(ctx context.Context, w io.Writer) error {
	letters, err := d.monitor.List(ctx, dlq.Filter{})
	if err != nil {
		return err
	}
	groups := dlq.GroupLetters(letters)
	fmt.Fprintf(w, "dlq: %d letters, %d root causes:\n", len(letters), len(groups))
	for _, g := range groups {
		fmt.Fprintf(w, "  %d × %s after %d attempt(s): %s\n", g.Count, g.Example.StopReason, g.Example.Attempts, g.Signature)
	}
	return nil
}

// fixAndReplay applies the fix, replays every letter to the queue (attempts
// reset), and runs the pool again.
func (d *demo) fixAndReplay(ctx context.Context, w io.Writer) error {
	d.tr.fix()
	fmt.Fprintln(w, "fix: the translator's replica is back, and it speaks Basque now")
	rep, err := dlq.Replay(ctx, d.monitor, dlq.Filter{}, d.dead.ToSource())
	if err != nil {
		return err
	}
	d.alerts.print(w, "as the replay took the letters out") // it resolves at the threshold, on the way to 0
	var ps pass
	if err := d.pool.drain(ctx, workers, &ps); err != nil {
		return err
	}
	left, err := d.monitor.Count(ctx, dlq.Filter{})
	fmt.Fprintf(w, "replay: %d letters back on %s, attempts reset → %d done, %d dead-lettered; the dlq holds %d\n",
		len(rep.Replayed), queueName, ps.done.Load(), ps.dead.Load(), left)
	d.alerts.print(w, "")
	return err
}

// verify checks what the counts above claim: every job done, each exactly
// once, and nothing left anywhere.
func (d *demo) verify(ctx context.Context, w io.Writer) error {
	effects, err := d.q.effects(ctx)
	if err != nil {
		return err
	}
	queued, processing, err := d.q.lengths(ctx)
	if err != nil {
		return err
	}
	letters, err := d.monitor.Count(ctx, dlq.Filter{})
	if err != nil {
		return err
	}
	once, total := 0, 0
	for _, id := range d.jobs {
		n, _ := strconv.Atoi(effects[id])
		total += n
		if n == 1 {
			once++
		}
	}
	fmt.Fprintf(w, "total: %d jobs, %d done exactly once (%d side effects); left: %d queued, %d processing, %d dead letters\n",
		len(d.jobs), once, total, queued, processing, letters)
	if once != len(d.jobs) || total != len(d.jobs) || queued+processing+int64(letters) != 0 {
		return errors.New("not every job was done exactly once")
	}
	return nil
}

// alertLog keeps the dead letter queue's alerts until they are printed.
type alertLog struct {
	mu     sync.Mutex
	alerts []dlq.Alert
}

func (a *alertLog) add(_ context.Context, al dlq.Alert) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.alerts = append(a.alerts, al)
}

// print prints the alerts kept, each with its state and when it came.
func (a *alertLog) print(w io.Writer, when string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, al := range a.alerts {
		state := "resolved"
		if al.Firing {
			state = "firing"
		}
		if when != "" {
			state += " " + when
		}
		fmt.Fprintf(w, "alert (%s): %s\n", state, al)
	}
	a.alerts = nil
}
