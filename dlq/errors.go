package dlq

import (
	"errors"
	"strconv"
)

// Sentinels, for errors.Is. Queues wrap them with the letter's id.
var (
	// ErrDeadLettered is matched by the error Record and Do return for a job
	// they stored: the job is safe in the dead letter queue (its letter's id
	// is LetterID(job.Source, job.ID)), so its message can be acknowledged.
	// That error also unwraps to the job's own, so errors.As still finds
	// the *retry.Error.
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
	// not know (one written by a newer version).
	ErrVersion = errors.New("unknown letter encoding version")
)

// deadLettered is what Record and Do return for a job they stored.
type deadLettered struct {
	id, job, stop string
	duplicate     bool  // the letter was already there: the job was redelivered
	err           error // the error that ended the job
}

// Error returns `dlq: job "7" dead-lettered as 1b2c3d4e5f607182
// (max-attempts): <err>`, with "already dead-lettered" for a duplicate.
func (e *deadLettered) Error() string {
	verb := " dead-lettered as "
	if e.duplicate {
		verb = " already dead-lettered as "
	}
	return "dlq: job " + strconv.Quote(e.job) + verb + e.id + " (" + e.stop + "): " + e.err.Error()
}

// Unwrap returns ErrDeadLettered and the error that ended the job.
func (e *deadLettered) Unwrap() []error { return []error{ErrDeadLettered, e.err} }
