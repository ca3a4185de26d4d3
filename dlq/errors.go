package dlq

import (
	"errors"
	"strconv"
)

// Sentinels, for errors.Is. Queues wrap them with the letter's id.
var (
	// ErrDeadLettered is matched by every *DeadLetteredError: the job is
	// safe in the dead letter queue, so its message can be acknowledged.
	ErrDeadLettered = errors.New("dead-lettered")
	// ErrNotFound: no letter has that id (it was never stored, or was
	// replayed, discarded or purged).
	ErrNotFound = errors.New("letter not found")
	// ErrClaimed: another replay of the letter is in progress.
	ErrClaimed = errors.New("letter is being replayed")
	// ErrClaimLapsed: a replay enqueued the letter's job, but its claim on
	// the letter lapsed first (the enqueue outlasted the queue's claim
	// timeout) and another replay took or removed the letter: that replay
	// may enqueue the job again. The letter is left to it.
	ErrClaimLapsed = errors.New("replay claim lapsed before the letter was removed")
	// ErrFull: a bounded queue holds as many letters as it may.
	ErrFull = errors.New("dead letter queue is full")
	// ErrCorrupt: a stored record is not a valid letter.
	ErrCorrupt = errors.New("corrupt letter record")
	// ErrVersion: a stored record has an encoding version this code does
	// not know (see EncodingVersion).
	ErrVersion = errors.New("unknown letter encoding version")
	// ErrNoSource: the queue does not know the job's source queue, so a
	// replay to it is impossible; pass an Enqueuer.
	ErrNoSource = errors.New("no source queue known")
)

// DeadLetteredError is what Record and Do return for a job they stored: the
// letter's id and the error that killed the job. It matches ErrDeadLettered
// and unwraps to that error, so errors.As still finds the *retry.Error.
type DeadLetteredError struct {
	ID         string     // the letter's id
	Job        string     // the job's id
	StopReason StopReason // why the retry loop gave up on it
	Duplicate  bool       // the letter was already there: the job was redelivered
	Err        error      // the error that ended the job
}

// Error returns `dlq: job "7" dead-lettered as 1b2c3d4e5f607182
// (max-attempts): <err>`, with "already dead-lettered" for a duplicate.
func (e *DeadLetteredError) Error() string {
	if e == nil {
		return "<nil>"
	}
	verb := " dead-lettered as "
	if e.Duplicate {
		verb = " already dead-lettered as "
	}
	s := "dlq: job " + strconv.Quote(e.Job) + verb + e.ID + " (" + string(e.StopReason) + ")"
	if e.Err == nil {
		return s
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns ErrDeadLettered and the error that ended the job.
func (e *DeadLetteredError) Unwrap() []error {
	if e == nil {
		return nil
	}
	return []error{ErrDeadLettered, e.Err}
}
