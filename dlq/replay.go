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
	// Lapsed lists the letters whose jobs were enqueued but whose claim
	// lapsed before the replay could remove them, while another replay
	// took them (ErrClaimLapsed): that replay may enqueue them again, and
	// decides whether they leave the queue.
	Lapsed []string
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
// otherwise it joins the failures and lapses (errors.Is finds the
// Enqueuer's errors, and ErrClaimLapsed). A nil ctx, q or to (a nil
// EnqueueFunc included) and an invalid f are a *retry.InvalidError, before
// anything is listed.
func Replay(ctx context.Context, q Queue, f Filter, to Enqueuer) (ReplayReport, error) {
	var rep ReplayReport
	if err := checkReplayAll(ctx, q, f, to); err != nil {
		return rep, err
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
		if err := rep.add(l.ID, q.Replay(ctx, l.ID, to)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return rep, fmt.Errorf("dlq: %d of %d letters not replayed cleanly: %w", len(errs), len(letters), errors.Join(errs...))
	}
	return rep, nil
}

func checkReplayAll(ctx context.Context, q Queue, f Filter, to Enqueuer) error {
	if err := checkQueue("dlq.Replay", ctx, q); err != nil {
		return err
	}
	if err := checkEnqueuer("dlq.Replay", ctx, to); err != nil {
		return err
	}
	return f.Validate()
}

// add files the outcome of one letter's replay, and returns err if it is
// a failure or a lapse.
func (rep *ReplayReport) add(id string, err error) error {
	switch {
	case err == nil:
		rep.Replayed = append(rep.Replayed, id)
	case errors.Is(err, ErrClaimLapsed):
		rep.Lapsed = append(rep.Lapsed, id)
		return err
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrClaimed):
		rep.Skipped = append(rep.Skipped, id)
	default:
		if rep.Failed == nil {
			rep.Failed = make(map[string]error)
		}
		rep.Failed[id] = err
		return err
	}
	return nil
}
