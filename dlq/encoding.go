package dlq

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
)

// encodingVersion is the version of the letter encoding that Encode writes.
// Decode reads it and every earlier version; a record of another version is
// refused with ErrVersion.
const encodingVersion = 2

// oldestVersion is the first encoding version. Version 1 differs from 2 only
// in the name of the stop reason: "reason", which read as the error's class.
const oldestVersion = 1

// wireLetter is encoding version 2, field by field (see the package
// documentation). Durations are integer nanoseconds, times RFC 3339 in UTC,
// the payload base64.
type wireLetter struct {
	V            int           `json:"v"`
	ID           string        `json:"id"`
	Job          wireJob       `json:"job"`
	StopReason   string        `json:"stop_reason"`
	Attempts     int           `json:"attempts"`
	WaitedNS     int64         `json:"waited_ns"`
	ElapsedNS    int64         `json:"elapsed_ns"`
	RetryAfterNS int64         `json:"retry_after_ns"`
	FirstFailure time.Time     `json:"first_failure"`
	LastFailure  time.Time     `json:"last_failure"`
	Last         wireFailure   `json:"last"`
	Failures     []wireFailure `json:"failures"`
}

type wireJob struct {
	ID       string            `json:"id"`
	Source   string            `json:"source"`
	Payload  []byte            `json:"payload"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

type wireFailure struct {
	Attempt      int    `json:"attempt"`
	Type         string `json:"type"`
	Error        string `json:"error"`
	Verdict      string `json:"verdict"`
	Class        string `json:"class"`
	RetryAfterNS int64  `json:"retry_after_ns"`
	Limit        int    `json:"limit"`
	Timeout      bool   `json:"timeout"`
	DelayNS      int64  `json:"delay_ns"`
	// At is when the loop saw the failure; absent when not known (added
	// within version 2: older readers ignore it).
	At *time.Time `json:"at,omitempty"`
}

// Encode returns l in the current encoding (version 2, see the package
// documentation): one JSON object, readable by people and by SQLite's and
// Redis's JSON functions. It refuses, with a *retry.InvalidError naming the
// field, a letter that could not be read back unchanged: an id that does
// not match its job, a required field unset, a string that is not UTF-8, a
// negative count or duration, times unset, out of order or beyond year
// 9999, more than 64 failures or a message longer than 4096 bytes. Every
// queue's Put refuses what Encode refuses.
func Encode(l Letter) ([]byte, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	w := wireLetter{
		V: encodingVersion, ID: l.ID, StopReason: l.StopReason, Attempts: l.Attempts,
		Job:      wireJob{ID: l.Job.ID, Source: l.Job.Source, Payload: l.Job.Payload, Metadata: l.Job.Metadata},
		WaitedNS: int64(l.Waited), ElapsedNS: int64(l.Elapsed), RetryAfterNS: int64(l.RetryAfter),
		FirstFailure: l.FirstFailure.UTC(), LastFailure: l.LastFailure.UTC(),
		Last: toWire(l.Last), Failures: make([]wireFailure, len(l.Failures)),
	}
	for i, f := range l.Failures {
		w.Failures[i] = toWire(f)
	}
	return json.Marshal(w)
}

func toWire(f Failure) wireFailure {
	return wireFailure{
		Attempt: f.Attempt, Type: f.Type, Error: f.Error,
		Verdict: f.Decision.Verdict.String(), Class: f.Decision.Reason,
		RetryAfterNS: int64(f.Decision.RetryAfter), Limit: f.Decision.Limit,
		Timeout: f.Decision.Timeout, DelayNS: int64(f.Delay), At: timePtr(f.At),
	}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// wireRead is what Decode reads: version 2, and version 1's name of the stop
// reason.
type wireRead struct {
	wireLetter
	ReasonV1 string `json:"reason"`
}

// Decode reads a letter written by Encode, in this version or an earlier one.
// A record of another version fails with ErrVersion; anything else that is
// not a valid letter — not JSON, fields of the wrong type, an id that does
// not match its job, a negative count — fails with ErrCorrupt. Empty input is
// also a *retry.InvalidError. It never panics.
func Decode(b []byte) (Letter, error) {
	if len(b) == 0 {
		return Letter{}, &retry.InvalidError{Name: "dlq.Decode", Value: "0 bytes", Err: fmt.Errorf("%w: empty", ErrCorrupt)}
	}
	var head struct {
		V *json.Number `json:"v"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return Letter{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if head.V == nil {
		return Letter{}, fmt.Errorf("%w: no version", ErrCorrupt)
	}
	v, err := head.V.Int64()
	if err != nil || v < oldestVersion || v > encodingVersion {
		return Letter{}, fmt.Errorf("%w: version %s, want %d to %d", ErrVersion, head.V, oldestVersion, encodingVersion)
	}
	var w wireRead
	if err := json.Unmarshal(b, &w); err != nil {
		return Letter{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if v == 1 {
		w.StopReason = w.ReasonV1
	}
	l, err := fromWire(w.wireLetter)
	if err != nil {
		return Letter{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return l, nil
}

func fromWire(w wireLetter) (Letter, error) {
	l := Letter{
		ID: w.ID, StopReason: w.StopReason, Attempts: w.Attempts,
		Job:    Job{ID: w.Job.ID, Source: w.Job.Source, Payload: w.Job.Payload, Metadata: w.Job.Metadata},
		Waited: time.Duration(w.WaitedNS), Elapsed: time.Duration(w.ElapsedNS), RetryAfter: time.Duration(w.RetryAfterNS),
		FirstFailure: w.FirstFailure.UTC(), LastFailure: w.LastFailure.UTC(),
	}
	var err error
	if l.Last, err = fromWireFailure(w.Last); err != nil {
		return Letter{}, err
	}
	for _, wf := range w.Failures {
		f, err := fromWireFailure(wf)
		if err != nil {
			return Letter{}, err
		}
		l.Failures = append(l.Failures, f)
	}
	l = canonical(l)
	return l, l.validate()
}

func fromWireFailure(w wireFailure) (Failure, error) {
	v, ok := parseVerdict(w.Verdict)
	if !ok {
		return Failure{}, fmt.Errorf("unknown verdict %q", w.Verdict)
	}
	var at time.Time
	if w.At != nil {
		at = w.At.UTC()
	}
	return Failure{
		Attempt: w.Attempt, Type: w.Type, Error: w.Error, Delay: time.Duration(w.DelayNS), At: at,
		Decision: classify.Decision{Verdict: v, Reason: w.Class, RetryAfter: time.Duration(w.RetryAfterNS),
			Limit: w.Limit, Timeout: w.Timeout},
	}, nil
}

func parseVerdict(s string) (classify.Verdict, bool) {
	for _, v := range []classify.Verdict{classify.NoOpinion, classify.Retry, classify.Stop} {
		if v.String() == s {
			return v, true
		}
	}
	return 0, false
}

// canonical gives a letter the form that a round trip through the encoding
// gives it: times in UTC without a monotonic reading, empty slices and maps
// nil.
func canonical(l Letter) Letter {
	l.FirstFailure, l.LastFailure = l.FirstFailure.UTC(), l.LastFailure.UTC()
	l.Last.At = utc(l.Last.At)
	if len(l.Failures) > 0 {
		fs := slices.Clone(l.Failures)
		for i := range fs {
			fs[i].At = utc(fs[i].At)
		}
		l.Failures = fs
	}
	if len(l.Job.Payload) == 0 {
		l.Job.Payload = nil
	}
	if len(l.Job.Metadata) == 0 {
		l.Job.Metadata = nil
	}
	if len(l.Failures) == 0 {
		l.Failures = nil
	}
	return l
}

// utc is t in UTC, and the zero time for the zero time.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}
