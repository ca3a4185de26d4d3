// Package queuetest is the conformance suite of dlq.Queue, in the manner of
// testing/fstest: every implementation runs it from its own tests.
//
//	func TestConformance(t *testing.T) {
//		queuetest.Run(t, func(t *testing.T) dlq.Queue {
//			q, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "dlq.db"), sqlite.Config{})
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { q.Close() })
//			return q
//		})
//	}
//
// The suite checks that letters round-trip with every field and every stop
// reason of policy.Stops, that a job put twice is one letter, that a replay hands each letter to the Enqueuer
// exactly once and keeps it when the Enqueuer fails, that a death during a
// replay is kept, that filters, Count, Discard and Purge agree, that letters
// group by root cause, that Summarize adds up what List returns, that a Monitor of the queue alerts once per crossing
// and reports to its observer, and that invalid arguments are refused before
// any work. RunLapses checks what a queue whose
// replay claims lapse does when an enqueue outlasts its claim. It uses only
// the standard library and the packages of this module.
package queuetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
)

// Run runs the suite. newQueue must return a new, empty queue for each
// subtest, and release it with t.Cleanup. A nil t or newQueue is a
// *retry.InvalidError, reported to t too if there is one, and runs nothing.
func Run(t *testing.T, newQueue func(t *testing.T) dlq.Queue) error {
	if err := check("queuetest.Run", t, newQueue); err != nil {
		return err
	}
	t.Helper()
	tests := []struct {
		name string
		test func(*testing.T, dlq.Queue)
	}{
		{"a letter comes back with every field", testRoundTrip},
		{"every stop reason makes a letter that comes back, and filters by it", testStopReasons},
		{"a job put twice is one letter", testDedupe},
		{"Record stores what the retry loop knew and says under which id", testRecord},
		{"an unknown id is not found", testNotFound},
		{"an invalid letter is refused", testInvalid},
		{"List returns the oldest first and Count agrees for every filter", testFilters},
		{"a replay hands the job back with attempts reset and removes the letter", testReplay},
		{"a failed enqueue keeps the letter and releases it", testReplayFails},
		{"concurrent replays enqueue a letter exactly once", testReplayOnce},
		{"an Enqueuer that panics leaves the letter free to replay", testReplayPanics},
		{"a job that dies again during its replay stays dead-lettered", testDeathDuringReplay},
		{"Discard removes one letter and not one being replayed", testDiscard},
		{"Purge removes what the filter selects and not what is being replayed", testPurge},
		{"Replay selects by id, by group or all, and keeps what failed", testReplaySelections},
		{"letters group by root cause", testGroups},
		{"Summarize adds up what List returns, for every filter", testSummarize},
		{"alerts fire once per crossing, up and down", testAlerts},
		{"a Monitor alerts through its hook and reports to its observer", testMonitor},
		{"a done context is reported", testCanceled},
		{"invalid arguments are refused before any work", testInvalidArguments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.test(t, open(t, newQueue)) })
	}
	return nil
}

// check refuses a nil t or open function, telling t if there is one.
func check[F any](name string, t *testing.T, open func(*testing.T) F) error {
	var err error
	switch {
	case t == nil:
		err = &retry.InvalidError{Name: name, Value: nil, Err: errors.New("the *testing.T must not be nil")}
	case open == nil:
		err = &retry.InvalidError{Name: name, Value: nil, Err: errors.New("the function that opens a queue must not be nil")}
		t.Error(err)
	}
	return err
}

// open returns newQueue's queue, failing t if there is none.
func open(t *testing.T, newQueue func(*testing.T) dlq.Queue) dlq.Queue {
	t.Helper()
	q := newQueue(t)
	if q == nil {
		t.Fatal("queuetest: the function that opens a queue returned nil")
	}
	return q
}

var (
	t0      = time.Date(2026, 11, 29, 10, 0, 0, 123456789, time.UTC)
	errBoom = errors.New("enqueue: broker unavailable")
)

// full is a letter with every field set.
func full(source, id string) dlq.Letter {
	d := classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnavailable, RetryAfter: 2 * time.Second, Limit: 1, Timeout: true}
	f := func(n int, delay time.Duration) dlq.Failure {
		return dlq.Failure{Attempt: n, Type: "*classify.StatusError", Error: "http 503 Service Unavailable", Decision: d, Delay: delay,
			At: t0.Add(time.Duration(n) * 700 * time.Millisecond)}
	}
	return dlq.Letter{
		ID:         dlq.LetterID(source, id),
		Job:        dlq.Job{ID: id, Source: source, Payload: []byte{0, 1, 0xfe, 0xff, 'h', 'i'}, Metadata: map[string]string{"tenant": "acme", "ñ": "☃"}},
		StopReason: policy.StopWaitTooLong.String(),
		Attempts:   3, Waited: 1500 * time.Millisecond, Elapsed: 2100 * time.Millisecond, RetryAfter: 90 * time.Second,
		FirstFailure: t0, LastFailure: t0.Add(2100 * time.Millisecond),
		Last: f(3, time.Nanosecond), Failures: []dlq.Failure{f(1, 500*time.Millisecond), f(2, time.Second), f(3, 0)},
	}
}

// letter is the letter of job id of source, dead at at after three
// attempts that failed with err.
func letter(t *testing.T, source, id string, at time.Time, err error) dlq.Letter {
	t.Helper()
	d := classifyDefault(err)
	rerr := &retry.Error{Stats: retry.Stats{Attempts: 3, Waited: 3 * time.Millisecond, Elapsed: 5 * time.Millisecond},
		Stop: policy.StopAttempts, Reason: retry.ErrExhausted, Last: err, Decision: d,
		Failures: []retry.Failure{{Attempt: 1, Err: err, Decision: d, Delay: time.Millisecond},
			{Attempt: 2, Err: err, Decision: d, Delay: 2 * time.Millisecond}, {Attempt: 3, Err: err, Decision: d}}}
	l, ok := dlq.NewLetter(dlq.Job{ID: id, Source: source, Payload: []byte("payload of " + id)}, rerr, at)
	if !ok {
		t.Fatalf("NewLetter(%s) refused a retry.Error with ErrExhausted", id)
	}
	return l
}

func put(t *testing.T, q dlq.Queue, ls ...dlq.Letter) {
	t.Helper()
	for _, l := range ls {
		stored, err := q.Put(context.Background(), l)
		if err != nil || !stored {
			t.Fatalf("Put(%s) = %v, %v; want true, nil", l.ID, stored, err)
		}
	}
}

func count(t *testing.T, q dlq.Queue, f dlq.Filter) int {
	t.Helper()
	n, err := q.Count(context.Background(), f)
	if err != nil {
		t.Fatalf("Count(%+v): %v", f, err)
	}
	return n
}

func ids(ls []dlq.Letter) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.ID
	}
	return out
}

func same(t *testing.T, what string, got, want dlq.Letter) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("%s:\n got %s\nwant %s\n(go: %#v)", what, g, w, got)
	}
}

// noZeroField fails when the fixture leaves a field zero: a field added to
// Letter must be added here, or its round trip is not tested.
func noZeroField(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	if v.Kind() != reflect.Struct || v.Type() == reflect.TypeOf(time.Time{}) {
		if v.IsZero() {
			t.Errorf("the fixture leaves %s zero", path)
		}
		return
	}
	for i := range v.NumField() {
		noZeroField(t, v.Field(i), path+"."+v.Type().Field(i).Name)
	}
}

func testRoundTrip(t *testing.T, q dlq.Queue) {
	want := full("llm-jobs", "job-1")
	noZeroField(t, reflect.ValueOf(want), "Letter")
	put(t, q, want)
	got, err := q.Get(context.Background(), want.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Get", got, want)
	ls, err := q.List(context.Background(), dlq.Filter{})
	if err != nil || len(ls) != 1 {
		t.Fatalf("List = %d letters, %v; want 1", len(ls), err)
	}
	same(t, "List", ls[0], want)
}

func testDedupe(t *testing.T, q dlq.Queue) {
	first := full("llm-jobs", "job-1")
	put(t, q, first)
	again := first
	again.Attempts, again.StopReason = 7, policy.StopBudget.String()
	stored, err := q.Put(context.Background(), again)
	if err != nil || stored {
		t.Fatalf("second Put = %v, %v; want false, nil", stored, err)
	}
	if n := count(t, q, dlq.Filter{}); n != 1 {
		t.Fatalf("Count = %d, want 1", n)
	}
	got, _ := q.Get(context.Background(), first.ID)
	same(t, "the first letter stays", got, first)
}

func testRecord(t *testing.T, q dlq.Queue) {
	// An exact wait: full jitter on 1µs would be 0ns one time in a thousand.
	r, err := retry.New(retry.WithMaxAttempts(3), retry.WithBackoff(backoff.Constant(time.Microsecond)), retry.WithJitter(jitter.None{}))
	if err != nil {
		t.Fatal(err)
	}
	job := dlq.Job{ID: "msg-42", Source: "emails", Payload: []byte(`{"to":"a@b.c"}`), Metadata: map[string]string{"tenant": "acme"}}
	calls := 0
	op := func(context.Context) error {
		calls++
		return &classify.StatusError{Code: http.StatusServiceUnavailable}
	}
	id := dlq.LetterID("emails", "msg-42")
	for _, says := range []string{"dead-lettered as " + id, "already dead-lettered as " + id} {
		err := dlq.Do(context.Background(), r, q, job, op)
		var rerr *retry.Error
		switch {
		case !errors.Is(err, dlq.ErrDeadLettered):
			t.Fatalf("Do = %v; want it dead-lettered", err)
		case !strings.Contains(err.Error(), `job "msg-42" `+says+" (max-attempts)"):
			t.Fatalf("Do = %v; want it to say %q and why", err, says)
		case !errors.As(err, &rerr) || !errors.Is(err, retry.ErrExhausted):
			t.Fatalf("Do = %v; want it to unwrap to the *retry.Error", err)
		}
	}
	if calls != 6 || count(t, q, dlq.Filter{}) != 1 {
		t.Fatalf("%d calls, %d letters; want 6 calls (two deliveries), 1 letter", calls, count(t, q, dlq.Filter{}))
	}
	l, err := q.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if l.StopReason != "max-attempts" || l.Attempts != 3 || len(l.Failures) != 3 || l.Last.Decision.Reason != classify.ReasonUnavailable ||
		l.Last.Error != "http 503 Service Unavailable" || l.Failures[0].Delay <= 0 || l.Failures[2].Delay != 0 ||
		!reflect.DeepEqual(l.Job, job) || l.LastFailure.Before(l.FirstFailure) {
		t.Fatalf("letter = %+v; want max-attempts, 3 attempts, their delays, the 503 and the job", l)
	}
}

func testNotFound(t *testing.T, q dlq.Queue) {
	ctx := context.Background()
	_, getErr := q.Get(ctx, "0123456789abcdef")
	discardErr := q.Discard(ctx, "0123456789abcdef")
	replayErr := q.Replay(ctx, "0123456789abcdef", dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return nil }))
	for name, err := range map[string]error{"Get": getErr, "Discard": discardErr, "Replay": replayErr} {
		if !errors.Is(err, dlq.ErrNotFound) {
			t.Errorf("%s of an unknown id = %v; want ErrNotFound", name, err)
		}
	}
}

func testInvalid(t *testing.T, q dlq.Queue) {
	wrongID := full("s", "j")
	wrongID.ID = dlq.LetterID("s", "other")
	noReason := full("s", "j")
	noReason.StopReason = ""
	for name, l := range map[string]dlq.Letter{"a zero letter": {}, "a wrong id": wrongID, "no reason": noReason} {
		if stored, err := q.Put(context.Background(), l); stored || !errors.Is(err, retry.ErrInvalid) {
			t.Errorf("Put(%s) = %v, %v; want false, retry.ErrInvalid", name, stored, err)
		}
	}
	if _, err := q.List(context.Background(), dlq.Filter{Limit: -1}); !errors.Is(err, retry.ErrInvalid) {
		t.Errorf("List with Limit -1 = %v; want retry.ErrInvalid", err)
	}
	if n := count(t, q, dlq.Filter{}); n != 0 {
		t.Errorf("Count = %d after refused puts, want 0", n)
	}
}

var (
	errTimeout1 = errors.New("timeout after 3012ms on 10.0.0.7")
	errTimeout2 = errors.New("timeout after 998ms on 10.0.0.9")
	err401      = &classify.StatusError{Code: http.StatusUnauthorized}
)

func testFilters(t *testing.T, q dlq.Queue) {
	a := letter(t, "llm", "a", t0, errTimeout1)
	b := letter(t, "email", "b", t0.Add(time.Minute), err401)
	c := letter(t, "llm", "c", t0.Add(2*time.Minute), errTimeout2)
	d := full("llm", "d") // wait-too-long, http 503, at t0+2.1s
	put(t, q, a, b, c, d)
	tests := []struct {
		name string
		f    dlq.Filter
		want []dlq.Letter
	}{
		{"the zero filter selects all, in the order put", dlq.Filter{}, []dlq.Letter{a, b, c, d}},
		{"by ids", dlq.Filter{IDs: []string{c.ID, a.ID, "0000000000000000"}}, []dlq.Letter{a, c}},
		{"by source", dlq.Filter{Source: "llm"}, []dlq.Letter{a, c, d}},
		{"by stop reason", dlq.Filter{StopReason: policy.StopWaitTooLong.String()}, []dlq.Letter{d}},
		{"by class", dlq.Filter{Class: classify.ReasonClientError}, []dlq.Letter{b}},
		{"by group", dlq.Filter{Group: a.Group()}, []dlq.Letter{a, c}},
		{"since is inclusive", dlq.Filter{Since: t0.Add(time.Minute)}, []dlq.Letter{b, c}},
		{"until is exclusive", dlq.Filter{Until: t0.Add(time.Minute)}, []dlq.Letter{a, d}},
		{"fields combine", dlq.Filter{Source: "llm", Since: t0.Add(time.Second)}, []dlq.Letter{c, d}},
		{"limit keeps the oldest", dlq.Filter{Source: "llm", Limit: 2}, []dlq.Letter{a, c}},
		{"offset skips the oldest", dlq.Filter{Source: "llm", Offset: 2}, []dlq.Letter{d}},
		{"offset and limit make a page", dlq.Filter{Source: "llm", Offset: 1, Limit: 1}, []dlq.Letter{c}},
		{"an offset past the end is an empty page", dlq.Filter{Source: "llm", Offset: 3, Limit: 1}, nil},
		{"nothing matches", dlq.Filter{Source: "nope"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := q.List(context.Background(), tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), ids(tt.want)) {
				t.Fatalf("List = %v, want %v", ids(got), ids(tt.want))
			}
			wantCount := len(tt.want)
			if tt.f.Limit > 0 || tt.f.Offset > 0 {
				wantCount = 3 // Count ignores the limit and the offset
			}
			if n := count(t, q, tt.f); n != wantCount {
				t.Fatalf("Count = %d, want %d", n, wantCount)
			}
		})
	}
}

// recorder is an Enqueuer that remembers the jobs it took, and fails for the
// job ids in fail.
type recorder struct {
	mu   sync.Mutex
	jobs []dlq.Job
	fail map[string]bool
}

func (r *recorder) Enqueue(_ context.Context, j dlq.Job) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail[j.ID] {
		return fmt.Errorf("job %s: %w", j.ID, errBoom)
	}
	r.jobs = append(r.jobs, j)
	return nil
}

func testReplay(t *testing.T, q dlq.Queue) {
	l := full("llm-jobs", "job-1")
	put(t, q, l)
	var to recorder
	if err := q.Replay(context.Background(), l.ID, &to); err != nil {
		t.Fatal(err)
	}
	if len(to.jobs) != 1 || !reflect.DeepEqual(to.jobs[0], l.Job) {
		t.Fatalf("enqueued %+v; want exactly the job %+v", to.jobs, l.Job)
	}
	if _, err := q.Get(context.Background(), l.ID); !errors.Is(err, dlq.ErrNotFound) {
		t.Fatalf("Get after the replay = %v; want ErrNotFound", err)
	}
	if err := q.Replay(context.Background(), l.ID, &to); !errors.Is(err, dlq.ErrNotFound) || len(to.jobs) != 1 {
		t.Fatalf("a second replay = %v with %d jobs enqueued; want ErrNotFound and 1", err, len(to.jobs))
	}
}

func testReplayFails(t *testing.T, q dlq.Queue) {
	l := full("llm-jobs", "job-1")
	put(t, q, l)
	to := &recorder{fail: map[string]bool{"job-1": true}}
	if err := q.Replay(context.Background(), l.ID, to); !errors.Is(err, errBoom) {
		t.Fatalf("Replay = %v; want the enqueue error", err)
	}
	got, err := q.Get(context.Background(), l.ID)
	if err != nil {
		t.Fatalf("the letter is gone after a failed enqueue: %v", err)
	}
	same(t, "the letter is kept unchanged", got, l)
	to.fail = nil
	if err := q.Replay(context.Background(), l.ID, to); err != nil || len(to.jobs) != 1 {
		t.Fatalf("the replay after the fix = %v with %d jobs; want nil and 1 (the claim was released)", err, len(to.jobs))
	}
}

func testReplayOnce(t *testing.T, q dlq.Queue) {
	l := full("llm-jobs", "job-1")
	put(t, q, l)
	const replayers = 6
	var calls int
	var mu sync.Mutex
	var once sync.Once
	entered, release := make(chan struct{}), make(chan struct{})
	slow := dlq.EnqueueFunc(func(context.Context, dlq.Job) error {
		mu.Lock()
		calls++
		mu.Unlock()
		once.Do(func() { close(entered) })
		<-release
		return nil
	})
	errs := make(chan error, replayers)
	go func() { errs <- q.Replay(context.Background(), l.ID, slow) }()
	<-entered
	var wg sync.WaitGroup
	for range replayers - 1 {
		wg.Go(func() { errs <- q.Replay(context.Background(), l.ID, slow) })
	}
	wg.Wait() // every other replay returned while the first holds the letter
	close(release)
	var ok, claimed int
	for range replayers {
		switch err := <-errs; {
		case err == nil:
			ok++
		case errors.Is(err, dlq.ErrClaimed):
			claimed++
		default:
			t.Errorf("Replay = %v; want nil or ErrClaimed", err)
		}
	}
	if ok != 1 || claimed != replayers-1 || calls != 1 || count(t, q, dlq.Filter{}) != 0 {
		t.Fatalf("%d replays succeeded, %d were refused, %d enqueues, %d letters left; want 1, %d, 1, 0",
			ok, claimed, calls, count(t, q, dlq.Filter{}), replayers-1)
	}
}

func testReplayPanics(t *testing.T, q dlq.Queue) {
	l := full("llm-jobs", "job-1")
	put(t, q, l)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the Enqueuer's panic was swallowed")
			}
		}()
		q.Replay(context.Background(), l.ID, dlq.EnqueueFunc(func(context.Context, dlq.Job) error { panic("enqueue bug") }))
	}()
	var to recorder
	if err := q.Replay(context.Background(), l.ID, &to); err != nil || len(to.jobs) != 1 {
		t.Fatalf("a replay after the panic = %v with %d jobs; want nil and 1", err, len(to.jobs))
	}
}

func testDeathDuringReplay(t *testing.T, q dlq.Queue) {
	l := full("llm-jobs", "job-1")
	put(t, q, l)
	again := l
	again.Attempts, again.LastFailure = 9, l.LastFailure.Add(time.Hour)
	var stored bool
	var putErr error
	fastWorker := dlq.EnqueueFunc(func(ctx context.Context, j dlq.Job) error {
		stored, putErr = q.Put(ctx, again) // the replayed job failed again before the replay finished
		return nil
	})
	if err := q.Replay(context.Background(), l.ID, fastWorker); err != nil {
		t.Fatal(err)
	}
	if !stored || putErr != nil {
		t.Fatalf("Put during the replay = %v, %v; want true, nil", stored, putErr)
	}
	got, err := q.Get(context.Background(), l.ID)
	if err != nil {
		t.Fatalf("the new death was lost: %v", err)
	}
	same(t, "the new letter", got, again)
}

func testDiscard(t *testing.T, q dlq.Queue) {
	a, b := full("s", "a"), full("s", "b")
	put(t, q, a, b)
	ctx := context.Background()
	if err := q.Discard(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := q.Discard(ctx, a.ID); !errors.Is(err, dlq.ErrNotFound) {
		t.Fatalf("a second Discard = %v; want ErrNotFound", err)
	}
	var inside error
	err := q.Replay(ctx, b.ID, dlq.EnqueueFunc(func(ctx context.Context, _ dlq.Job) error {
		inside = q.Discard(ctx, b.ID)
		return errBoom
	}))
	if !errors.Is(inside, dlq.ErrClaimed) || !errors.Is(err, errBoom) {
		t.Fatalf("Discard during a replay = %v (replay: %v); want ErrClaimed", inside, err)
	}
	if ls, _ := q.List(ctx, dlq.Filter{}); !slices.Equal(ids(ls), []string{b.ID}) {
		t.Fatalf("letters left = %v, want [%s]", ids(ls), b.ID)
	}
}

func testPurge(t *testing.T, q dlq.Queue) {
	ctx := context.Background()
	a, b, c := letter(t, "llm", "a", t0, errTimeout1), letter(t, "email", "b", t0, err401), letter(t, "llm", "c", t0, errTimeout2)
	put(t, q, a, b, c)
	if n, err := q.Purge(ctx, dlq.Filter{Source: "email"}); n != 1 || err != nil {
		t.Fatalf("Purge(source email) = %d, %v; want 1, nil", n, err)
	}
	var purged int
	err := q.Replay(ctx, a.ID, dlq.EnqueueFunc(func(ctx context.Context, _ dlq.Job) error {
		purged, _ = q.Purge(ctx, dlq.Filter{})
		return errBoom
	}))
	if purged != 1 || !errors.Is(err, errBoom) {
		t.Fatalf("Purge during a replay of one of two letters removed %d (replay: %v); want 1", purged, err)
	}
	if ls, _ := q.List(ctx, dlq.Filter{}); !slices.Equal(ids(ls), []string{a.ID}) {
		t.Fatalf("letters left = %v, want the one being replayed, [%s]", ids(ls), a.ID)
	}
	if n, err := q.Purge(ctx, dlq.Filter{}); n != 1 || err != nil || count(t, q, dlq.Filter{}) != 0 {
		t.Fatalf("Purge(all) = %d, %v; want 1, nil and an empty queue", n, err)
	}
}

func testReplaySelections(t *testing.T, q dlq.Queue) {
	ctx := context.Background()
	a, b, c, d := letter(t, "llm", "a", t0, errTimeout1), letter(t, "llm", "b", t0, err401),
		letter(t, "llm", "c", t0, errTimeout2), letter(t, "llm", "d", t0, err401)
	put(t, q, a, b, c, d)
	to := &recorder{fail: map[string]bool{"d": true}}

	rep, err := dlq.Replay(ctx, q, dlq.Filter{IDs: []string{b.ID}}, to)
	if err != nil || !slices.Equal(rep.Replayed, []string{b.ID}) {
		t.Fatalf("Replay(ids b) = %+v, %v; want b replayed", rep, err)
	}
	rep, err = dlq.Replay(ctx, q, dlq.Filter{Group: a.Group()}, to)
	if err != nil || !slices.Equal(rep.Replayed, []string{a.ID, c.ID}) {
		t.Fatalf("Replay(group of the timeouts) = %+v, %v; want a and c", rep, err)
	}
	rep, err = dlq.Replay(ctx, q, dlq.Filter{}, to)
	if !errors.Is(err, errBoom) || len(rep.Replayed) != 0 || rep.Failed[d.ID] == nil {
		t.Fatalf("Replay(all) = %+v, %v; want d failed with the enqueue error", rep, err)
	}
	if ls, _ := q.List(ctx, dlq.Filter{}); !slices.Equal(ids(ls), []string{d.ID}) {
		t.Fatalf("letters left = %v, want only d, whose enqueue failed", ids(ls))
	}
	var jobs []string
	for _, j := range to.jobs {
		jobs = append(jobs, j.ID)
	}
	if !slices.Equal(jobs, []string{"b", "a", "c"}) {
		t.Fatalf("enqueued %v, want each of b, a, c once", jobs)
	}
}

func testGroups(t *testing.T, q dlq.Queue) {
	put(t, q, letter(t, "llm", "a", t0, errTimeout1), letter(t, "llm", "b", t0.Add(time.Minute), err401),
		letter(t, "llm", "c", t0.Add(2*time.Minute), errTimeout2))
	ls, err := q.List(context.Background(), dlq.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	gs := dlq.GroupLetters(ls)
	if len(gs) != 2 || gs[0].Count != 2 || gs[1].Count != 1 {
		t.Fatalf("groups = %+v; want the two timeouts together and the 401 apart", gs)
	}
	if gs[0].Example.Job.ID != "c" || !gs[0].FirstSeen.Equal(t0) || !gs[0].LastSeen.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("timeouts group = %+v; want example c (the latest), seen from t0 to t0+2m", gs[0])
	}
	if n := count(t, q, dlq.Filter{Group: gs[1].ID}); n != 1 {
		t.Fatalf("Count(the 401 group) = %d, want 1", n)
	}
}

func testAlerts(t *testing.T, q dlq.Queue) {
	var got []string
	m, err := dlq.NewMonitor(q, dlq.MonitorConfig{
		Thresholds: dlq.Thresholds{Size: 3, Growth: 4, Window: time.Hour},
		OnAlert: func(_ context.Context, a dlq.Alert) {
			got = append(got, fmt.Sprintf("%s firing=%v count=%d", a.Kind, a.Firing, a.Count))
		},
		Logger: discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(context.Background()); err != nil { // the baseline of growth: 0 letters
		t.Fatal(err)
	}
	var all []dlq.Letter
	for i := range 6 {
		l := letter(t, "llm", fmt.Sprint("job-", i), t0.Add(time.Duration(i)*time.Minute), errTimeout1)
		all = append(all, l)
		put(t, m, l)
	}
	for _, l := range all { // the growth resolves as the count goes back down
		if err := m.Discard(context.Background(), l.ID); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"size firing=true count=4", "growth firing=true count=5",
		"growth firing=false count=4", "size firing=false count=3",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("alerts:\n%v\nwant\n%v", got, want)
	}
}

// events records what an observer heard, one line an event.
type events struct {
	mu    sync.Mutex
	lines []string
}

func (e *events) Observe(_ context.Context, ev observe.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch ev.Kind {
	case observe.LetterAdded:
		l := ev.Detail.(dlq.Letter)
		e.lines = append(e.lines, fmt.Sprintf("added %s %s %s %s", l.Job.ID, l.StopReason, ev.Stop, ev.Decision.Reason))
	case observe.LetterReplayed:
		e.lines = append(e.lines, fmt.Sprintf("replayed %s %v", ev.Detail, ev.Err))
	case observe.QueueCounted:
		e.lines = append(e.lines, fmt.Sprint("counted ", ev.Detail))
	}
}

func testMonitor(t *testing.T, q dlq.Queue) {
	var got []dlq.Alert
	var heard events
	m, err := dlq.NewMonitor(q, dlq.MonitorConfig{
		Thresholds: dlq.Thresholds{Size: 2, Growth: dlq.Off},
		Observer:   &heard,
		OnAlert:    func(_ context.Context, a dlq.Alert) { got = append(got, a) },
		Logger:     discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		put(t, m, letter(t, "llm", fmt.Sprint("job-", i), t0, errTimeout1))
	}
	if stored, _ := m.Put(context.Background(), letter(t, "llm", "job-0", t0, errTimeout1)); stored {
		t.Fatal("a duplicate was stored")
	}
	if len(got) != 1 || !got[0].Firing || got[0].Count != 3 || len(got[0].Groups) != 1 || got[0].Groups[0].Count != 3 {
		t.Fatalf("alerts after 3 letters = %+v; want one, firing at 3 letters, with its one root cause", got)
	}
	id := dlq.LetterID("llm", "job-2")
	var to recorder
	if err := m.Replay(context.Background(), id, &to); err != nil {
		t.Fatal(err)
	}
	if err := m.Replay(context.Background(), id, &to); !errors.Is(err, dlq.ErrNotFound) {
		t.Fatalf("a second replay = %v; want ErrNotFound", err)
	}
	if n, err := m.Purge(context.Background(), dlq.Filter{}); n != 2 || err != nil {
		t.Fatalf("Purge = %d, %v", n, err)
	}
	if len(got) != 2 || got[1].Firing || got[1].Count != 2 {
		t.Fatalf("alerts after the replay and the purge = %+v; want a second one, resolved at 2 letters", got)
	}
	added := "max-attempts max-attempts " + classify.ReasonUnclassified
	want := []string{
		"added job-0 " + added, "counted 1", "added job-1 " + added, "counted 2", "added job-2 " + added, "counted 3",
		"replayed " + id + " <nil>", "counted 2",
		"replayed " + id + " ", // ErrNotFound, worded by the queue
		"counted 0",
	}
	if len(heard.lines) != len(want) {
		t.Fatalf("the observer heard\n%q\nwant\n%q", heard.lines, want)
	}
	for i, line := range heard.lines {
		if !strings.HasPrefix(line, want[i]) {
			t.Fatalf("the observer heard\n%q\nwant lines starting\n%q", heard.lines, want)
		}
	}
}

// testStopReasons puts a letter of every reason a retry loop stops for but
// the caller's cancellation, and one of an error that is no retry loop's:
// each comes back with its stop reason, the stable label of the reason, and
// a filter by that label selects it alone. A reason added to policy.Stop is
// tested here without a change.
func testStopReasons(t *testing.T, q dlq.Queue) {
	ctx := context.Background()
	want := map[string]string{} // letter id -> stop reason
	for s := range policy.Stops() {
		rerr := &retry.Error{Stats: retry.Stats{Attempts: 1}, Stop: s, Reason: errors.New(s.String()), Last: errTimeout1}
		l, ok := dlq.NewLetter(dlq.Job{ID: s.String(), Source: "stops"}, rerr, t0)
		switch {
		case s == policy.StopCanceled && ok:
			t.Errorf("NewLetter made a letter of a call its caller's context ended")
		case s == policy.StopCanceled:
		case !ok || l.StopReason != s.String():
			t.Errorf("NewLetter(%v) = %q, %v; want a letter with stop reason %q", s, l.StopReason, ok, s.String())
		default:
			put(t, q, l)
			want[l.ID] = s.String()
		}
	}
	failed, _ := dlq.NewLetter(dlq.Job{ID: "plain", Source: "stops"}, errTimeout1, t0)
	put(t, q, failed)
	want[failed.ID] = "failed"
	for id, reason := range want {
		got, err := q.Get(ctx, id)
		if err != nil || got.StopReason != reason {
			t.Errorf("Get(%s) = %q, %v; want stop reason %q", id, got.StopReason, err, reason)
		}
		ls, err := q.List(ctx, dlq.Filter{StopReason: reason})
		if err != nil || !slices.Equal(ids(ls), []string{id}) {
			t.Errorf("List(stop reason %q) = %v, %v; want [%s]", reason, ids(ls), err, id)
		}
	}
}

func testCanceled(t *testing.T, q dlq.Queue) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.Put(ctx, full("s", "j")); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a done context = %v; want context.Canceled", err)
	}
	if _, err := q.List(ctx, dlq.Filter{}); !errors.Is(err, context.Canceled) {
		t.Errorf("List with a done context = %v; want context.Canceled", err)
	}
	if err := dlq.Record(ctx, q, dlq.Job{ID: "j", Source: "s"}, errBoom); err != errBoom {
		t.Errorf("Record with a done context = %v; want the job's error, unchanged", err)
	}
}

var discard = slog.New(slog.DiscardHandler)

// testInvalidArguments calls every method with a nil context, an empty id or
// a nil Enqueuer: each must be a *retry.InvalidError, and the letter must be
// left as it was — stored, unclaimed, never enqueued.
func testInvalidArguments(t *testing.T, q dlq.Queue) {
	l := full("llm-jobs", "job-1")
	put(t, q, l)
	ctx := context.Background()
	var nilCtx context.Context
	var to recorder
	tests := []struct {
		name string
		call func() error
	}{
		{"Put with a nil context", func() error { _, err := q.Put(nilCtx, full("llm-jobs", "job-2")); return err }},
		{"Get with a nil context", func() error { _, err := q.Get(nilCtx, l.ID); return err }},
		{"Get of an empty id", func() error { _, err := q.Get(ctx, ""); return err }},
		{"List with a nil context", func() error { _, err := q.List(nilCtx, dlq.Filter{}); return err }},
		{"Count with a nil context", func() error { _, err := q.Count(nilCtx, dlq.Filter{}); return err }},
		{"Replay with a nil context", func() error { return q.Replay(nilCtx, l.ID, &to) }},
		{"Replay of an empty id", func() error { return q.Replay(ctx, "", &to) }},
		{"Replay to a nil Enqueuer", func() error { return q.Replay(ctx, l.ID, nil) }},
		{"Replay to a nil EnqueueFunc", func() error { return q.Replay(ctx, l.ID, dlq.EnqueueFunc(nil)) }},
		{"Discard with a nil context", func() error { return q.Discard(nilCtx, l.ID) }},
		{"Discard of an empty id", func() error { return q.Discard(ctx, "") }},
		{"Purge with a nil context", func() error { _, err := q.Purge(nilCtx, dlq.Filter{}); return err }},
		{"List with a negative offset", func() error { _, err := q.List(ctx, dlq.Filter{Offset: -1}); return err }},
		{"Summarize with a nil context", func() error { _, err := dlq.Summarize(nilCtx, q, dlq.Filter{}); return err }},
		{"Summarize with a negative limit", func() error { _, err := dlq.Summarize(ctx, q, dlq.Filter{Limit: -1}); return err }},
	}
	if s, ok := q.(dlq.Summarizer); ok {
		tests = append(tests, struct {
			name string
			call func() error
		}{"the queue's own Summarize with a nil context", func() error { _, err := s.Summarize(nilCtx, dlq.Filter{}); return err }})
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, retry.ErrInvalid) {
				t.Fatalf("%s = %v; want retry.ErrInvalid", tt.name, err)
			}
		})
	}
	if ls, err := q.List(ctx, dlq.Filter{}); err != nil || !slices.Equal(ids(ls), []string{l.ID}) || len(to.jobs) != 0 {
		t.Fatalf("after the refused calls: letters %v (%v), %d jobs enqueued; want only %s, none enqueued", ids(ls), err, len(to.jobs), l.ID)
	}
	if err := q.Discard(ctx, l.ID); err != nil {
		t.Fatalf("Discard after the refused calls = %v; want the letter unclaimed", err)
	}
}

// classifyDefault classifies an error that did not come from a retry loop
// as a Retrier with no options would: the built-in table, then unclassified.
func classifyDefault(err error) classify.Decision {
	if d := classify.Default(err); d.Verdict != classify.NoOpinion {
		return d
	}
	return classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnclassified}
}

// listOnly hides a queue's own Summarize: dlq.Summarize adds up what its
// List returns, the reference every Summarizer must equal.
type listOnly struct{ dlq.Queue }

func testSummarize(t *testing.T, q dlq.Queue) {
	ctx := context.Background()
	empty, err := dlq.Summarize(ctx, q, dlq.Filter{})
	if err != nil || empty.Count != 0 || len(empty.Groups) != 0 || !empty.Oldest.IsZero() {
		t.Fatalf("Summarize(an empty queue) = %+v, %v; want nothing", empty, err)
	}
	a := letter(t, "llm", "a", t0, errTimeout1)
	b := letter(t, "email", "b", t0.Add(time.Minute), err401)
	c := letter(t, "llm", "c", t0.Add(24*time.Minute), errTimeout2)
	d := full("llm", "d") // wait-too-long, http 503, at t0+2.1s
	e := letter(t, "llm", "e", t0.Add(12*time.Minute), errTimeout1)
	put(t, q, a, b, c, d, e)
	all, err := dlq.Summarize(ctx, q, dlq.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if all.Count != 5 || all.BySource["llm"] != 4 || all.ByClass[classify.ReasonClientError] != 1 || len(all.Groups) != 3 {
		t.Fatalf("Summarize = %+v; want 5 letters, 4 of llm, one 401, 3 groups", all)
	}
	g := all.Groups[0]
	if g.ID != a.Group() || g.Count != 3 || g.Example.ID != c.ID || !g.FirstSeen.Equal(t0) || !g.LastSeen.Equal(c.LastFailure) {
		t.Fatalf("largest group = %+v; want the 3 timeouts, c the latest", g)
	}
	if len(g.Histogram) != 24 || g.Histogram[0] != 1 || g.Histogram[12] != 1 || g.Histogram[23] != 1 {
		t.Fatalf("timeouts' histogram = %v; want one at t0 (slice 0), one at +12m (12), one at +24m (23)", g.Histogram)
	}
	for _, f := range []dlq.Filter{{}, {Source: "llm"}, {Group: a.Group()}, {Since: t0.Add(time.Minute)},
		{StopReason: policy.StopAttempts.String(), Until: t0.Add(20 * time.Minute)}, {IDs: []string{b.ID, d.ID}},
		{Class: classify.ReasonClientError}, {Source: "nope"}, {Limit: 1, Offset: 1}} {
		got, err := dlq.Summarize(ctx, q, f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := dlq.Summarize(ctx, listOnly{q}, f)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := summaryJSON(t, got), summaryJSON(t, want); g != w {
			t.Errorf("Summarize(%+v):\n got %s\nwant %s", f, g, w)
		}
	}
}

func summaryJSON(t *testing.T, s dlq.Summary) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
