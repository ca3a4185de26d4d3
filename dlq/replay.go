package dlq

import (
	"context"
	"errors"
	"fmt"
)

// ReplayReport says what Replay did with each letter it selected.
type ReplayReport struct {
	// Replayed lists the letters whose jobs were enqueued and which left
	// the queue, in the order they were replayed.
	Replayed []string
	// Skipped lists the letters another process replayed, discarded or
	// was replaying between the listing and their turn.
	Skipped []string
	// Failed holds, by letter id, why a letter stayed: the Enqueuer's error
	// or the queue's.
	Failed map[string]error
}

// Replay sends the jobs of the letters f selects — some ids (Filter.IDs), a
// root cause (Filter.Group), or all (the zero Filter) — back through to, one
// at a time, oldest first, each exactly once (see Queue.Replay): a letter
// leaves the queue only when to accepted its job. A failure does not stop
// the others; ctx does.
//
// The error is nil when every selected letter was replayed or skipped;
// otherwise it joins the failures (errors.Is finds the Enqueuer's errors).
func Replay(ctx context.Context, q Queue, f Filter, to Enqueuer) (ReplayReport, error) {
	var rep ReplayReport
	if to == nil {
		return rep, invalid("dlq.Replay", nil, "the Enqueuer must not be nil")
	}
	letters, err := q.List(ctx, f)
	if err != nil {
		return rep, err
	}
	var errs []error
	for _, l := range letters {
		if err := ctx.Err(); err != nil {
			return rep, errors.Join(append(errs, context.Cause(ctx))...)
		}
		switch err := q.Replay(ctx, l.ID, to); {
		case err == nil:
			rep.Replayed = append(rep.Replayed, l.ID)
		case errors.Is(err, ErrNotFound), errors.Is(err, ErrClaimed):
			rep.Skipped = append(rep.Skipped, l.ID)
		default:
			if rep.Failed == nil {
				rep.Failed = make(map[string]error)
			}
			rep.Failed[l.ID] = err
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return rep, fmt.Errorf("dlq: %d of %d letters not replayed: %w", len(errs), len(letters), errors.Join(errs...))
	}
	return rep, nil
}
