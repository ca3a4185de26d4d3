package dlq

import (
	"context"
	"fmt"
	"time"

	"github.com/retrykit/retry"
)

// Record dead-letters job if err says it failed for good, with everything the
// retry loop knew (see NewLetter), and returns a *DeadLetteredError naming
// the letter — also when the job was already there (Duplicate): a
// redelivered message is one letter. The caller acknowledges the job's
// message on a *DeadLetteredError, and lets it be redelivered otherwise.
//
// Record returns nil for a nil err. It returns err unchanged, storing
// nothing, when the retry loop was stopped by its context or ctx is done:
// the caller gave up, not the job (use context.WithoutCancel to dead-letter
// during a shutdown). When the queue refuses the letter it returns an error
// that wraps both the queue's error and err, and is no *DeadLetteredError.
func Record(ctx context.Context, q Queue, job Job, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	l, ok := NewLetter(job, err, time.Now())
	if !ok {
		return err
	}
	stored, perr := q.Put(ctx, l)
	if perr != nil {
		return fmt.Errorf("dlq: job %q not dead-lettered: %w (job error: %w)", job.ID, perr, err)
	}
	return &DeadLetteredError{ID: l.ID, Job: job.ID, Reason: l.Reason, Duplicate: !stored, Err: err}
}

// Do calls op through r (nil means retry.New() with no options) and, if it
// fails for good, dead-letters job: Record(ctx, q, job, r.Do(ctx, op)).
func Do(ctx context.Context, r *retry.Retrier, q Queue, job Job, op func(context.Context) error) error {
	return Record(ctx, q, job, r.Do(ctx, op))
}
