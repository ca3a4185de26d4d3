package dlq_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/policy"
)

// The bounds of a letter, as the package documents them.
const (
	maxFailures   = 64
	maxErrorBytes = 4096
)

func TestNewLetterRecordsWhatTheRetryLoopKnew(t *testing.T) {
	job := dlq.Job{ID: "7", Source: "llm-jobs", Payload: []byte("p"), Metadata: map[string]string{"k": "v"}}
	rerr := exhausted(3, fmt.Errorf("send: %w", syscall.ECONNRESET))
	l, ok := dlq.NewLetter(job, fmt.Errorf("worker: %w", rerr), t0)
	switch {
	case !ok:
		t.Fatal("NewLetter refused an exhausted retry loop")
	case l.ID != dlq.LetterID("llm-jobs", "7") || l.StopReason != "max-attempts" || l.Attempts != 3:
		t.Fatalf("letter = %+v; want its id, max-attempts, 3 attempts", l)
	case l.Waited != 20*time.Millisecond || l.Elapsed != 21*time.Millisecond:
		t.Fatalf("waited %v, elapsed %v; want 20ms, 21ms", l.Waited, l.Elapsed)
	case !l.LastFailure.Equal(t0) || !l.FirstFailure.Equal(t0.Add(-21*time.Millisecond)):
		t.Fatalf("failures from %v to %v; want t0-21ms to t0", l.FirstFailure, l.LastFailure)
	case l.Last.Type != "syscall.Errno" || l.Last.Error != "send: connection reset by peer" || l.Last.Decision.Reason != classify.ReasonConnReset:
		t.Fatalf("last = %+v; want the innermost type, the message and the class", l.Last)
	case len(l.Failures) != 3 || l.Failures[0].Delay != 10*time.Millisecond || l.Failures[2].Delay != 0 || l.Failures[1].Attempt != 2:
		t.Fatalf("failures = %+v; want three, with their delays", l.Failures)
	}
	if _, err := dlq.Encode(l); err != nil {
		t.Fatal(err)
	}
}

func TestNewLetterRefusesWhatWasNotGivenUp(t *testing.T) {
	cancelled := exhausted(1, errors.New("x"))
	cancelled.Stop, cancelled.Reason = policy.StopCanceled, context.Canceled
	custom := exhausted(1, errors.New("x"))
	custom.Stop, custom.Reason = policy.StopCanceled, errors.New("shutting down") // a context's cause
	for name, err := range map[string]error{"a nil error": nil, "a cancelled loop": cancelled, "a loop stopped by its context's cause": custom} {
		t.Run(name+" is no letter", func(t *testing.T) {
			if _, ok := dlq.NewLetter(dlq.Job{ID: "j", Source: "s"}, err, t0); ok {
				t.Fatal("NewLetter made a letter")
			}
		})
	}
}

func TestNewLetterOfAHandMadeErrorWithoutAStopSaysFailed(t *testing.T) {
	e := exhausted(2, errors.New("x"))
	e.Stop = policy.Continue
	l, ok := dlq.NewLetter(dlq.Job{ID: "j", Source: "s"}, e, t0)
	if !ok || l.StopReason != "failed" || l.Attempts != 2 || len(l.Failures) != 2 {
		t.Fatalf("letter = %+v, %v; want stop reason failed, with the loop's two attempts", l, ok)
	}
}

func TestNewLetterOfAPlainErrorClassifiesIt(t *testing.T) {
	l, ok := dlq.NewLetter(dlq.Job{ID: "j", Source: "s"}, &classify.StatusError{Code: http.StatusForbidden}, t0)
	if !ok || l.StopReason != "failed" || l.Attempts != 1 || len(l.Failures) != 1 ||
		l.Last.Decision.Verdict != classify.Stop || l.Last.Type != "*classify.StatusError" {
		t.Fatalf("letter = %+v; want one failed attempt, classified stop", l)
	}
}

func TestNewLetterOfALoopStoppedBeforeItsFirstAttemptRecordsTheReason(t *testing.T) {
	e := &retry.Error{Stop: policy.StopKeyRequired, Reason: retry.ErrKeyRequired}
	l, ok := dlq.NewLetter(dlq.Job{ID: "j", Source: "s"}, e, t0)
	if !ok || l.Attempts != 0 || l.Last.Attempt != 0 || !strings.Contains(l.Last.Error, "idempotency key required") {
		t.Fatalf("letter = %+v; want no attempt and the reason as the last error", l)
	}
	if _, err := dlq.Encode(l); err != nil {
		t.Fatal(err)
	}
}

func TestNewLetterBoundsWhatItKeeps(t *testing.T) {
	huge := errors.New(strings.Repeat("é", maxErrorBytes))
	l, _ := dlq.NewLetter(dlq.Job{ID: "j", Source: "s"}, exhausted(1000, huge), t0)
	if len(l.Failures) != maxFailures || l.Failures[31].Attempt != 32 || l.Failures[32].Attempt != 969 || l.Attempts != 1000 {
		t.Fatalf("kept %d failures (attempts %d, %d); want %d: the first and last %d", len(l.Failures),
			l.Failures[31].Attempt, l.Failures[32].Attempt, maxFailures, maxFailures/2)
	}
	if n := len(l.Last.Error); n > maxErrorBytes || !strings.HasSuffix(l.Last.Error, "é…") {
		t.Fatalf("kept %d bytes ending %q; want at most %d, cut at a character", n, l.Last.Error[n-8:], maxErrorBytes)
	}
	if _, err := dlq.Encode(l); err != nil {
		t.Fatal(err)
	}
}

func TestNewLetterMakesMessagesValidUTF8(t *testing.T) {
	l, _ := dlq.NewLetter(dlq.Job{ID: "j", Source: "s"}, exhausted(1, errors.New("bad \xff byte")), t0)
	if l.Last.Error != "bad \uFFFD byte" {
		t.Fatalf("message = %q", l.Last.Error)
	}
}

func TestLetterIDSeparatesSourceFromJob(t *testing.T) {
	if dlq.LetterID("ab", "c") == dlq.LetterID("a", "bc") {
		t.Fatal("LetterID(ab, c) == LetterID(a, bc)")
	}
	if id := dlq.LetterID("s", "j"); len(id) != 16 || id != dlq.LetterID("s", "j") {
		t.Fatalf("LetterID = %q; want 16 stable hex digits", id)
	}
}

// TestEncodeNamesTheBadField: what could not be read back unchanged is
// refused by Encode, and so by every queue's Put.
func TestEncodeNamesTheBadField(t *testing.T) {
	good := sample("j")
	tests := []struct {
		name   string
		change func(*dlq.Letter)
		field  string
	}{
		{"an empty job id", func(l *dlq.Letter) { l.Job.ID = "" }, "dlq.Job.ID"},
		{"a source of invalid UTF-8", func(l *dlq.Letter) { l.Job.Source = "\xff" }, "dlq.Job.Source"},
		{"an empty metadata key", func(l *dlq.Letter) { l.Job.Metadata = map[string]string{"": "v"} }, "dlq.Job.Metadata"},
		{"an id of another job", func(l *dlq.Letter) { l.ID = dlq.LetterID("test", "other") }, "dlq.Letter.ID"},
		{"no stop reason", func(l *dlq.Letter) { l.StopReason = "" }, "dlq.Letter.StopReason"},
		{"negative attempts", func(l *dlq.Letter) { l.Attempts = -1 }, "dlq.Letter.Attempts"},
		{"a negative wait", func(l *dlq.Letter) { l.Waited = -1 }, "dlq.Letter.Waited"},
		{"a negative elapsed time", func(l *dlq.Letter) { l.Elapsed = -1 }, "dlq.Letter.Elapsed"},
		{"a negative Retry-After", func(l *dlq.Letter) { l.RetryAfter = -1 }, "dlq.Letter.RetryAfter"},
		{"no first failure", func(l *dlq.Letter) { l.FirstFailure = time.Time{} }, "dlq.Letter.FirstFailure"},
		{"a last failure in year 10000", func(l *dlq.Letter) { l.LastFailure = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "dlq.Letter.LastFailure"},
		{"failures out of order", func(l *dlq.Letter) { l.LastFailure = l.FirstFailure.Add(-1) }, "dlq.Letter.LastFailure"},
		{"too many failures", func(l *dlq.Letter) { l.Failures = make([]dlq.Failure, maxFailures+1) }, "dlq.Letter.Failures"},
		{"a failure's negative delay", func(l *dlq.Letter) { l.Failures[0].Delay = -1 }, "dlq.Letter.Failures[0].Delay"},
		{"an unknown verdict", func(l *dlq.Letter) { l.Last.Decision.Verdict = 9 }, "dlq.Letter.Last.Decision.Verdict"},
		{"a too long error", func(l *dlq.Letter) { l.Last.Error = strings.Repeat("x", maxErrorBytes+1) }, "dlq.Letter.Last.Error"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused, naming "+tt.field, func(t *testing.T) {
			l := sample("j")
			l.Failures = append([]dlq.Failure(nil), good.Failures...)
			tt.change(&l)
			var inv *retry.InvalidError
			if _, err := dlq.Encode(l); !errors.As(err, &inv) || inv.Name != tt.field {
				t.Fatalf("Encode = %v; want an *InvalidError naming %s", err, tt.field)
			}
		})
	}
}

func TestEveryAttemptKeepsItsTimeThroughTheEncoding(t *testing.T) {
	rerr := exhausted(3, errors.New("boom"))
	for i := range rerr.Failures {
		rerr.Failures[i].At = t0.Add(time.Duration(i) * time.Second).In(time.FixedZone("CET", 3600))
	}
	l, _ := dlq.NewLetter(dlq.Job{ID: "1", Source: "test"}, rerr, t0.Add(3*time.Second))
	for i, f := range l.Failures {
		if want := t0.Add(time.Duration(i) * time.Second); !f.At.Equal(want) || f.At.Location() != time.UTC {
			t.Fatalf("attempt %d at %v; want %v in UTC", f.Attempt, f.At, want)
		}
	}
	if !l.Last.At.Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("the last attempt at %v; want t0+2s", l.Last.At)
	}
	rec, err := dlq.Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dlq.Decode(rec)
	if err != nil || !got.Failures[1].At.Equal(l.Failures[1].At) || !got.Last.At.Equal(l.Last.At) {
		t.Fatalf("after a round trip: %+v, %v", got.Failures, err)
	}
	plain, _ := dlq.NewLetter(dlq.Job{ID: "2", Source: "test"}, errors.New("boom"), t0)
	if rec, _ := dlq.Encode(plain); strings.Contains(string(rec), `"at"`) {
		t.Fatalf("a failure of unknown time is encoded with one: %s", rec)
	}
}
