package dlq

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/policy"
)

// Limits on what one letter keeps, so that a job failing with a huge error or
// a loop with thousands of attempts cannot make a letter unbounded.
const (
	// maxFailures is how many attempts a letter records: beyond it, the
	// first and the last maxFailures/2 are kept (Attempts still counts all).
	maxFailures = 64
	// maxErrorBytes is the longest error message kept, in bytes; a longer
	// one is cut at a character boundary and ends with "…".
	maxErrorBytes = 4096
)

// Job is a unit of work as its queue delivered it: what a replay puts back.
// It carries no attempt count, so a replayed job starts again from its first
// attempt.
type Job struct {
	// ID identifies the job in its source queue. A redelivered message
	// carries the same ID, which is why dead-lettering it twice stores one
	// letter. Required.
	ID string
	// Source names the queue the job came from, e.g. "llm-jobs". Required.
	Source string
	// Payload is the job's body, as delivered.
	Payload []byte
	// Metadata is free-form (tenant, trace id, headers); it goes back with
	// the job on replay.
	Metadata map[string]string
}

// stopFailed is the stop reason of a letter whose error did not come from a
// retry loop: the one list of reasons (policy.Stop) has no word for it.
const stopFailed = "failed"

// stopReason is the stop reason a letter stores for s: its stable label. A
// *retry.Error built by hand without a Stop (policy.Continue) says only that
// the call failed.
func stopReason(s policy.Stop) string {
	if s == policy.Continue {
		return stopFailed
	}
	return s.String()
}

// stopOf is the reason whose label is a letter's stop reason, and
// policy.Continue for "failed" and for a label this code does not know (one
// written by a newer version).
func stopOf(label string) policy.Stop {
	for s := range policy.Stops() {
		if s.String() == label {
			return s
		}
	}
	return policy.Continue
}

// Failure records one failed attempt of a dead job.
type Failure struct {
	Attempt  int               // 1-based; 0 when no attempt was made
	Type     string            // Go type of the innermost error, e.g. "syscall.Errno"
	Error    string            // the error's message, at most 4096 bytes (cut at a character, ending "…")
	Decision classify.Decision // how the attempt's error was classified; Decision.Reason is its class, e.g. "http 503"
	Delay    time.Duration     // the wait that followed it; 0 for the last
	At       time.Time         // when the retry loop saw it (retry.Failure.At, UTC); zero when not known
}

// Letter is a dead job and everything known about its death. Letters are
// values: queues store and return copies.
type Letter struct {
	// ID is LetterID(Job.Source, Job.ID): the same job always has the same
	// letter, which makes storing it idempotent.
	ID  string
	Job Job
	// StopReason is why the retry loop gave up on the job: the stable label
	// of its policy.Stop (the *retry.Error's Stop.String(): max-attempts,
	// budget, limited, breaker-open, …), or "failed" for an error that did
	// not come from a retry loop. It is not the class of the job's error
	// ("http 503", Last.Decision.Reason): a job failing with one class can
	// stop for several reasons, and Filter tells the two apart.
	StopReason string
	// Attempts counts every attempt the job made, the first included.
	Attempts int
	// Waited is the time spent waiting between attempts, Elapsed the time
	// from the start of the retry loop to its end.
	Waited, Elapsed time.Duration
	// RetryAfter is the wait the server asked for when the loop stopped
	// instead of waiting (stop reason wait-too-long or deadline); 0 otherwise.
	RetryAfter time.Duration
	// FirstFailure and LastFailure bound the job's failures: the time the
	// retry loop saw the first one (retry.Failure.At; for an error without
	// that record, LastFailure minus the loop's Elapsed) and the time the job
	// was dead-lettered.
	FirstFailure, LastFailure time.Time
	// Last is the last attempt's error and its classification; for a loop
	// that stopped before any attempt (key-required, limited, breaker-open)
	// it holds the stage's refusal, or else the loop's reason (e.g.
	// retry.ErrLimited).
	Last Failure
	// Failures lists the attempts' errors in order: at most 64, the first
	// and the last 32 of a longer run (Attempts still counts them all).
	Failures []Failure
}

// LetterID returns the id of the letter of the job id of queue source: 16
// hexadecimal digits of a SHA-256 of both.
func LetterID(source, jobID string) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(source)))])
	h.Write([]byte(source))
	h.Write([]byte(jobID))
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// NewLetter builds the letter of job, which failed for good with err at now.
// It reads a *retry.Error anywhere in err's chain: why the loop stopped
// (StopReason is its Stop's label), its attempts, waits and every attempt's
// error and classification. Every reason of policy.Stop makes a letter but
// the caller's cancellation: the policy's, the retry budget's, a rate
// limiter's or a circuit breaker's refusal (limited, breaker-open: nothing
// was sent, and the job was not done), and any reason added later. Another
// error makes a letter of one attempt, classified by classify.Default, with
// stop reason "failed".
//
// It returns false, and no letter, only for a nil err and for a retry loop
// that the caller's context ended (policy.StopCanceled): that job was not
// given up on, its caller was, and it must be redelivered, not buried.
func NewLetter(job Job, err error, now time.Time) (Letter, bool) {
	if err == nil {
		return Letter{}, false
	}
	l := Letter{ID: LetterID(job.Source, job.ID), Job: job, LastFailure: now.UTC()}
	var rerr *retry.Error
	if !errors.As(err, &rerr) {
		d := classifyDefault(err)
		l.StopReason, l.Attempts, l.FirstFailure = stopFailed, 1, l.LastFailure
		l.Last = newFailure(1, err, d, 0)
		l.Failures = []Failure{l.Last}
		return l, true
	}
	if rerr.Stop == policy.StopCanceled {
		return Letter{}, false
	}
	l.StopReason, l.Attempts = stopReason(rerr.Stop), rerr.Attempts
	l.Waited, l.Elapsed, l.RetryAfter = rerr.Waited, rerr.Elapsed, rerr.RetryAfter
	l.FirstFailure = l.LastFailure.Add(-rerr.Elapsed)
	if len(rerr.Failures) > 0 && !rerr.Failures[0].At.IsZero() && !rerr.Failures[0].At.After(now) {
		l.FirstFailure = rerr.Failures[0].At.UTC()
	}
	l.Last = newFailure(rerr.Attempts, rerr.Last, rerr.Decision, 0)
	if n := len(rerr.Failures); n > 0 && rerr.Failures[n-1].Attempt == rerr.Attempts {
		l.Last.At = at(rerr.Failures[n-1].At)
	}
	if rerr.Last == nil {
		l.Last = newFailure(0, rerr.Reason, rerr.Decision, 0)
	}
	l.Failures = failures(rerr.Failures)
	return l, true
}

func failures(fs []retry.Failure) []Failure {
	if len(fs) == 0 {
		return nil
	}
	keep := fs
	if len(fs) > maxFailures {
		keep = append(fs[:maxFailures/2:maxFailures/2], fs[len(fs)-maxFailures/2:]...)
	}
	out := make([]Failure, len(keep))
	for i, f := range keep {
		out[i] = newFailure(f.Attempt, f.Err, f.Decision, f.Delay)
		out[i].At = at(f.At)
	}
	return out
}

// at is a failure's time as a letter keeps it: UTC, without a monotonic
// reading, and zero (unknown) outside the years a letter can store.
func at(t time.Time) time.Time {
	if y := t.UTC().Year(); t.IsZero() || y < 1 || y > 9999 {
		return time.Time{}
	}
	return t.UTC().Round(0)
}

func newFailure(attempt int, err error, d classify.Decision, delay time.Duration) Failure {
	f := Failure{Attempt: attempt, Decision: d, Delay: delay}
	if err != nil {
		f.Type, f.Error = rootType(err), clip(err.Error())
	}
	return f
}

// rootType names the type of the innermost error of err's chain (the first
// branch of a joined error): the cause, rather than its wrappers.
func rootType(err error) string {
	for range 100 { // a cycle of wrappers must not hang us
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 {
				next = errs[0]
			}
		}
		if next == nil {
			break
		}
		err = next
	}
	return reflect.TypeOf(err).String()
}

// clip makes s valid UTF-8 of at most maxErrorBytes bytes.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxErrorBytes {
		return s
	}
	const ellipsis = "…"
	cut := maxErrorBytes - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}

// validate reports whether l can be stored and read back unchanged: the id
// matches the job, the required fields are set, strings are valid UTF-8,
// counts and durations are not negative, times are set, in order and between
// years 1 and 9999, and the bounds of maxFailures and maxErrorBytes hold.
// The error is a *retry.InvalidError naming the field.
func (l Letter) validate() error {
	if err := l.Job.validate(); err != nil {
		return err
	}
	if want := LetterID(l.Job.Source, l.Job.ID); l.ID != want {
		return argerr.New("dlq.Letter.ID", l.ID, "must be LetterID(Job.Source, Job.ID) = "+want)
	}
	if l.StopReason == "" || !utf8.ValidString(l.StopReason) {
		return argerr.New("dlq.Letter.StopReason", l.StopReason, "must be non-empty UTF-8")
	}
	if err := l.validateNumbers(); err != nil {
		return err
	}
	if err := l.validateTimes(); err != nil {
		return err
	}
	if len(l.Failures) > maxFailures {
		return argerr.New("dlq.Letter.Failures", len(l.Failures), fmt.Sprintf("must hold at most %d failures", maxFailures))
	}
	if err := l.Last.validate("dlq.Letter.Last"); err != nil {
		return err
	}
	for i, f := range l.Failures {
		if err := f.validate(fmt.Sprintf("dlq.Letter.Failures[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

func (j Job) validate() error {
	switch {
	case j.ID == "" || !utf8.ValidString(j.ID):
		return argerr.New("dlq.Job.ID", j.ID, "must be non-empty UTF-8")
	case j.Source == "" || !utf8.ValidString(j.Source):
		return argerr.New("dlq.Job.Source", j.Source, "must be non-empty UTF-8")
	}
	for k, v := range j.Metadata {
		if k == "" || !utf8.ValidString(k) || !utf8.ValidString(v) {
			return argerr.New("dlq.Job.Metadata", k, "keys must be non-empty UTF-8 and values UTF-8")
		}
	}
	return nil
}

func (l Letter) validateNumbers() error {
	switch {
	case l.Attempts < 0:
		return argerr.New("dlq.Letter.Attempts", l.Attempts, "must not be negative")
	case l.Waited < 0:
		return argerr.New("dlq.Letter.Waited", l.Waited, "must not be negative")
	case l.Elapsed < 0:
		return argerr.New("dlq.Letter.Elapsed", l.Elapsed, "must not be negative")
	case l.RetryAfter < 0:
		return argerr.New("dlq.Letter.RetryAfter", l.RetryAfter, "must not be negative")
	}
	return nil
}

func (l Letter) validateTimes() error {
	for _, t := range []struct {
		name string
		t    time.Time
	}{{"dlq.Letter.FirstFailure", l.FirstFailure}, {"dlq.Letter.LastFailure", l.LastFailure}} {
		if y := t.t.UTC().Year(); t.t.IsZero() || y < 1 || y > 9999 {
			return argerr.New(t.name, t.t, "must be set, between years 1 and 9999")
		}
	}
	if l.LastFailure.Before(l.FirstFailure) {
		return argerr.New("dlq.Letter.LastFailure", l.LastFailure, "must not be before FirstFailure")
	}
	return nil
}

func (f Failure) validate(name string) error {
	switch {
	case f.Attempt < 0:
		return argerr.New(name+".Attempt", f.Attempt, "must not be negative")
	case f.Delay < 0:
		return argerr.New(name+".Delay", f.Delay, "must not be negative")
	case f.Decision.RetryAfter < 0 || f.Decision.Limit < 0:
		return argerr.New(name+".Decision", f.Decision, "RetryAfter and Limit must not be negative")
	case f.Decision.Verdict > classify.Stop:
		return argerr.New(name+".Decision.Verdict", f.Decision.Verdict, "unknown verdict")
	case len(f.Error) > maxErrorBytes:
		return argerr.New(name+".Error", len(f.Error), fmt.Sprintf("must be at most %d bytes", maxErrorBytes))
	case !f.At.IsZero() && (f.At.UTC().Year() < 1 || f.At.UTC().Year() > 9999):
		return argerr.New(name+".At", f.At, "must be zero, or between years 1 and 9999")
	}
	for _, s := range []string{f.Type, f.Error, f.Decision.Reason} {
		if !utf8.ValidString(s) {
			return argerr.New(name, s, "strings must be UTF-8")
		}
	}
	return nil
}

// classifyDefault classifies an error that did not come from a retry loop
// as a Retrier with no options would: the built-in table, then unclassified.
func classifyDefault(err error) classify.Decision {
	if d := classify.Default(err); d.Verdict != classify.NoOpinion {
		return d
	}
	return classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnclassified}
}
