package dlq

import (
	"context"
	"slices"
	"time"

	"github.com/retrykit/retry/internal/argerr"
)

// Queue stores dead letters. Implementations are safe for concurrent use,
// and all of them pass the conformance suite in package queuetest.
//
// Put stores l and reports true, unless a letter with the same id is
// already there: then it stores nothing and reports false (a redelivered
// job is one letter) — except while that letter is being replayed, when
// the new letter replaces it and the replay leaves it in place, for it is a
// new death. Put refuses a letter that Encode refuses.
//
// Get returns the letter with id id, or ErrNotFound.
//
// List returns the letters f selects, oldest put first, skipping the first
// f.Offset of them and returning at most f.Limit; Count counts them
// (ignoring f.Limit and f.Offset).
//
// Replay claims the letter id (ErrNotFound, or ErrClaimed if another replay
// holds it), hands its Job to to, and removes the letter only if to
// succeeded; otherwise it releases the claim, keeps the letter and returns
// to's error. Concurrent replays of one letter enqueue it once. A process
// that dies between a successful enqueue and the removal leaves the letter
// claimed until its claim times out, after which it may be replayed again:
// an Enqueuer that must not see a job twice dedupes by Job.ID. An enqueue
// that outlasts the claim is reported with ErrClaimLapsed when another
// replay took the letter meanwhile (see ReplayClaimed, which implements
// Replay for a queue's author).
//
// Discard removes the letter id (ErrNotFound, ErrClaimed). Purge removes
// the letters f selects that no replay holds (ignoring f.Limit) and returns
// how many it removed.
type Queue interface {
	Put(ctx context.Context, l Letter) (stored bool, err error)
	Get(ctx context.Context, id string) (Letter, error)
	List(ctx context.Context, f Filter) ([]Letter, error)
	Count(ctx context.Context, f Filter) (int, error)
	Replay(ctx context.Context, id string, to Enqueuer) error
	Discard(ctx context.Context, id string) error
	Purge(ctx context.Context, f Filter) (int, error)
}

// Enqueuer puts a job back on a queue, for Replay. It must return nil only
// once the job is safely enqueued.
type Enqueuer interface {
	Enqueue(ctx context.Context, job Job) error
}

// EnqueueFunc adapts a function to Enqueuer.
type EnqueueFunc func(ctx context.Context, job Job) error

// Enqueue calls f(ctx, job). A nil f or ctx is a *retry.InvalidError.
func (f EnqueueFunc) Enqueue(ctx context.Context, job Job) error {
	if err := checkEnqueuer("dlq.EnqueueFunc.Enqueue", ctx, f); err != nil {
		return err
	}
	return f(ctx, job)
}

// checkEnqueuer refuses a nil context and a nil Enqueuer, including a nil
// EnqueueFunc, which is not a nil interface.
func checkEnqueuer(name string, ctx context.Context, to Enqueuer) error {
	if f, ok := to.(EnqueueFunc); to == nil || ok && f == nil {
		return argerr.New(name, nil, "the Enqueuer must not be nil")
	}
	return checkContext(name, ctx)
}

// checkContext refuses a nil context, on which every call would panic.
func checkContext(name string, ctx context.Context) error {
	if ctx == nil {
		return argerr.New(name, nil, "the context must not be nil")
	}
	return nil
}

// Filter selects letters. Its zero value selects every letter; each field
// set narrows the selection.
//
// StopReason selects by why the retry loop gave up (Letter.StopReason): the
// label of a policy.Stop, e.g. policy.StopBudget.String() ("budget") or
// policy.StopLimited.String() ("limited"), or "failed". Class selects by the
// kind of failure (Last.Decision.Reason, e.g. "http 503"), which is not the
// same: a job failing with one class can stop for several reasons.
type Filter struct {
	IDs        []string // only these letters
	Source     string   // Job.Source
	StopReason string   // Letter.StopReason: a policy.Stop's label, or "failed"
	Class      string   // the class of their last error (Last.Decision.Reason), e.g. "http 503"
	Group      string   // Letter.Group(): one root cause (see GroupLetters)
	// Since and Until bound LastFailure: Since <= LastFailure < Until.
	Since, Until time.Time
	// Limit caps how many letters List returns (the oldest); 0 means no
	// limit. Count and Purge ignore it.
	Limit int
	// Offset skips the first Offset letters selected, for List to return a
	// page: Filter{Offset: 50, Limit: 50} is the second page of 50. Count
	// and Purge ignore it.
	Offset int
}

// Match reports whether f selects l.
func (f Filter) Match(l Letter) bool {
	switch {
	case len(f.IDs) > 0 && !slices.Contains(f.IDs, l.ID),
		f.Source != "" && l.Job.Source != f.Source,
		f.StopReason != "" && l.StopReason != f.StopReason,
		f.Class != "" && l.Last.Decision.Reason != f.Class,
		!f.Since.IsZero() && l.LastFailure.Before(f.Since),
		!f.Until.IsZero() && !l.LastFailure.Before(f.Until),
		f.Group != "" && l.Group() != f.Group:
		return false
	}
	return true
}

// Validate reports a negative Limit or Offset, as a *retry.InvalidError: what every
// queue's List, Count and Purge refuse.
func (f Filter) Validate() error {
	if f.Limit < 0 {
		return argerr.New("dlq.Filter.Limit", f.Limit, "must not be negative (0 means no limit)")
	}
	if f.Offset < 0 {
		return argerr.New("dlq.Filter.Offset", f.Offset, "must not be negative")
	}
	return nil
}
