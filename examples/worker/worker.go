package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
)

// translator is the dependency the jobs call. Until it is fixed, the replica
// serving some documents refuses connections, it does not know Basque, and
// it drops the first connection of one document.
type translator struct {
	mu    sync.Mutex
	fixed bool
	down  map[string]string // document key → its replica's address, refusing connections
	flaky string            // the document whose first call is reset
	calls map[string]int
}

func newTranslator() *translator {
	return &translator{
		down:  map[string]string{"doc-03": "10.0.0.3:443", "doc-06": "10.0.0.6:443", "doc-09": "10.0.0.9:443"},
		flaky: "doc-02",
		calls: map[string]int{},
	}
}

// fix is "the fix": the replica is back, and the new version speaks Basque.
func (t *translator) fix() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.fixed = true
}

func (t *translator) translate(_ context.Context, d document) (string, error) {
	t.mu.Lock()
	t.calls[d.Key]++
	first, fixed := t.calls[d.Key] == 1, t.fixed
	t.mu.Unlock()
	switch {
	case fixed:
	case d.Key == t.flaky && first:
		return "", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	case t.down[d.Key] != "":
		addr, _ := net.ResolveTCPAddr("tcp", t.down[d.Key])
		return "", &net.OpError{Op: "dial", Net: "tcp", Addr: addr, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	case d.Lang == "eu":
		return "", fmt.Errorf("translate %s: %w", d.Key, &classify.StatusError{Code: 422, Kind: "unsupported-language"})
	}
	return "[en] " + d.Text, nil
}

// pool is a worker pool: it processes each job through the Retrier and
// dead-letters those that fail for good.
type pool struct {
	q    *jobQueue
	r    *retry.Retrier
	dead dlq.Queue
	tr   *translator

	recording sync.Mutex // see record
}

// pass is one run of the pool until the queue is empty, and what it did.
type pass struct {
	taken, skipped, done, retried, dead, acksLost atomic.Int64
	// loseAcks makes this many workers "crash" between completing a job and
	// acknowledging its message: fault injection, for the redelivery.
	loseAcks atomic.Int64
}

// drain runs n workers until the queue is empty.
func (p *pool) drain(ctx context.Context, n int, ps *pass) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = p.work(ctx, ps) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (p *pool) work(ctx context.Context, ps *pass) error {
	for {
		msg, err := p.q.take(ctx)
		if errors.Is(err, goredis.Nil) {
			return nil // the queue is empty
		}
		if err == nil {
			err = p.handle(ctx, msg, ps)
		}
		if err != nil {
			return err
		}
	}
}

// handle processes one delivery: claim the job by id, run it with retries,
// and complete it, dead-letter it, or leave its message for redelivery.
func (p *pool) handle(ctx context.Context, msg string, ps *pass) error {
	ps.taken.Add(1)
	var m message
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		return err
	}
	claimed, err := p.q.claim(ctx, m.JobID)
	if err != nil {
		return err
	}
	if !claimed {
		ps.skipped.Add(1) // another delivery of the job is done, or being processed
		return p.q.ack(ctx, msg)
	}
	var result string
	stats, err := p.r.Run(ctx, func(ctx context.Context) (err error) {
		result, err = p.tr.translate(ctx, m.Doc)
		return err
	})
	// The payload is the message as delivered: the queue's Put (From the
	// processing list) finds it by value there, and a replay puts it back as
	// it was.
	err = p.record(ctx, dlq.Job{ID: m.JobID, Source: queueName, Payload: []byte(msg)}, err)
	switch {
	case err == nil:
		return p.complete(ctx, m.JobID, msg, result, stats, ps)
	case errors.Is(err, dlq.ErrDeadLettered):
		ps.dead.Add(1)
		return p.q.markDead(ctx, m.JobID)
	}
	return errors.Join(err, p.q.release(context.WithoutCancel(ctx), m.JobID))
}

// record dead-letters a job that failed for good, one job at a time, so that
// the size alert counts each letter as it arrives: with letters stored at once
// it may first see 5 where 4 crossed the threshold, and the example's output
// names the count. (dlq.Monitor itself never lets a stale count resolve an
// alert.)
func (p *pool) record(ctx context.Context, job dlq.Job, err error) error {
	p.recording.Lock()
	defer p.recording.Unlock()
	return dlq.Record(ctx, p.dead, job, err)
}

func (p *pool) complete(ctx context.Context, jobID, msg, result string, stats retry.Stats, ps *pass) error {
	if err := p.q.complete(ctx, jobID, result); err != nil {
		return err
	}
	ps.done.Add(1)
	if stats.Attempts > 1 {
		ps.retried.Add(1)
	}
	if ps.loseAcks.Add(-1) >= 0 {
		ps.acksLost.Add(1)
		return nil // "crashed": the message stays in the processing list
	}
	return p.q.ack(ctx, msg)
}
