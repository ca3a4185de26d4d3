package dlq

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/internal/argerr"
)

// Record dead-letters job if err says it failed for good, with everything the
// retry loop knew (see NewLetter), and returns an error that matches
// ErrDeadLettered and wraps err, naming the letter — also when the job was
// already there ("already dead-lettered"): a redelivered message is one
// letter. The caller acknowledges the job's message when
// errors.Is(err, ErrDeadLettered), and lets it be redelivered otherwise.
//
// Record returns nil for a nil err. It returns err unchanged, storing
// nothing, when the retry loop was stopped by its context or ctx is done:
// the caller gave up, not the job (use context.WithoutCancel to dead-letter
// during a shutdown). When the queue refuses the letter it returns an error
// that wraps both the queue's error and err, and does not match
// ErrDeadLettered.
//
// A nil ctx or q is a *retry.InvalidError (wrapping err too), before
// anything is stored.
func Record(ctx context.Context, q Queue, job Job, err error) error {
	if inv := checkQueue("dlq.Record", ctx, q); inv != nil {
		return notStored(job, inv, err)
	}
	if err == nil || ctx.Err() != nil {
		return err
	}
	l, ok := NewLetter(job, err, time.Now())
	if !ok {
		return err
	}
	stored, perr := q.Put(ctx, l)
	if perr != nil {
		return notStored(job, perr, err)
	}
	return &deadLettered{id: l.ID, job: job.ID, stop: l.StopReason, duplicate: !stored, err: err}
}

// notStored is the error of a job whose letter was not stored: why, and the
// job's own error.
func notStored(job Job, why, err error) error {
	if err == nil {
		return why
	}
	return fmt.Errorf("dlq: job %q not dead-lettered: %w (job error: %w)", job.ID, why, err)
}

func checkQueue(name string, ctx context.Context, q Queue) error {
	if q == nil {
		return argerr.New(name, nil, "the Queue must not be nil")
	}
	return checkContext(name, ctx)
}

// Do calls op through r and, if it fails for good, dead-letters job:
// Record(ctx, q, job, r.Do(ctx, op)).
//
// A nil ctx, r, q or op, and a job without an ID or a Source, are a
// *retry.InvalidError, before op runs: a job that could not be dead-lettered
// must not be worked on. So is a Retrier that refuses the call without
// calling op (one built with bad options): its error comes back as it is,
// and no letter is stored.
func Do(ctx context.Context, r *retry.Retrier, q Queue, job Job, op func(context.Context) error) error {
	if err := checkDo(ctx, r, q, job, op); err != nil {
		return err
	}
	var ran atomic.Bool
	err := r.Do(ctx, func(ctx context.Context) error {
		ran.Store(true)
		return op(ctx)
	})
	if !ran.Load() && errors.Is(err, retry.ErrInvalid) {
		return err
	}
	return Record(ctx, q, job, err)
}

func checkDo(ctx context.Context, r *retry.Retrier, q Queue, job Job, op func(context.Context) error) error {
	switch {
	case r == nil:
		return argerr.New("dlq.Do", nil, "the Retrier must not be nil (retry.New() has the defaults)")
	case op == nil:
		return argerr.New("dlq.Do", nil, "the operation must not be nil")
	}
	if err := checkQueue("dlq.Do", ctx, q); err != nil {
		return err
	}
	return job.validate()
}
