package dlq_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
)

func ExampleDo() {
	r, _ := retry.New(retry.WithBackoff(backoff.Constant(time.Millisecond)))
	q := memQueue()
	job := dlq.Job{ID: "msg-1", Source: "llm-jobs", Payload: []byte(`{"prompt":"hi"}`)}
	process := func(context.Context) error { return &classify.StatusError{Code: http.StatusServiceUnavailable} }

	for range 2 { // the message is redelivered: still one letter
		err := dlq.Do(context.Background(), r, q, job, process)
		var rerr *retry.Error
		if errors.Is(err, dlq.ErrDeadLettered) && errors.As(err, &rerr) {
			fmt.Println("acknowledge:", rerr.Stop, rerr.Attempts) // the job is safe in the queue
		}
	}
	l, _ := q.Get(context.Background(), dlq.LetterID(job.Source, job.ID))
	n, _ := q.Count(context.Background(), dlq.Filter{})
	fmt.Println(n, "letter:", l.ID, l.StopReason, l.Last.Error)
	// Output:
	// acknowledge: max-attempts 3
	// acknowledge: max-attempts 3
	// 1 letter: 9fa6dc9bdf55e27c max-attempts http 503 Service Unavailable
}

func ExampleRecord() {
	q := memQueue()
	job := dlq.Job{ID: "7", Source: "emails"}
	err := retry.Do(context.Background(), func(context.Context) error {
		return &classify.StatusError{Code: http.StatusUnauthorized}
	})
	err = dlq.Record(context.Background(), q, job, err)
	fmt.Println(errors.Is(err, dlq.ErrDeadLettered), errors.Is(err, retry.ErrPermanent))

	l, _ := q.Get(context.Background(), dlq.LetterID("emails", "7"))
	fmt.Println(l.StopReason, l.Attempts, l.Last.Type, l.Last.Error, l.Last.Decision)
	// Output:
	// true true
	// permanent 1 *classify.StatusError http 401 Unauthorized stop (http 4xx)
}

func ExampleNewLetter() {
	failed := fmt.Errorf("dial: %w", errors.New("timeout after 3012ms on 10.0.0.7"))
	l, ok := dlq.NewLetter(dlq.Job{ID: "7", Source: "llm-jobs"}, failed, time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	fmt.Println(ok, l.ID, l.StopReason, l.Attempts, l.LastFailure)
	fmt.Println(l.Signature())
	// Output:
	// true baabc1e43114f0a6 failed 1 2026-11-29 10:00:00 +0000 UTC
	// *errors.errorString [unclassified] dial: timeout after <n>ms on <addr>
}

// A call the client-side rate limiter refused sent nothing and did not do
// its job: the job is dead-lettered, its stop reason the refusal's label.
func ExampleNewLetter_limited() {
	refuse := limiter{} // a limit.Adaptive or limit.Throttler refuses like it when the rate is used up
	r, _ := retry.New(retry.WithLimiter(refuse))
	err := r.Do(context.Background(), func(context.Context) error { return nil })

	l, ok := dlq.NewLetter(dlq.Job{ID: "7", Source: "llm-jobs"}, err, time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	fmt.Println(ok, l.StopReason == policy.StopLimited.String(), l.StopReason, l.Attempts)
	fmt.Println(l.Last.Error)
	// Output:
	// true true limited 0
	// refused locally by the client-side rate limiter, nothing sent
}

// A filter selects letters by why their retry loop gave up with the label
// of a policy.Stop, or "failed" for an error no retry loop returned.
func ExampleFilter() {
	ctx := context.Background()
	q := memQueue()
	limited, _ := retry.New(retry.WithLimiter(limiter{}))
	dlq.Record(ctx, q, dlq.Job{ID: "1", Source: "llm-jobs"}, limited.Do(ctx, func(context.Context) error { return nil }))
	dlq.Record(ctx, q, dlq.Job{ID: "2", Source: "llm-jobs"}, errors.New("boom"))

	ls, _ := q.List(ctx, dlq.Filter{StopReason: policy.StopLimited.String()})
	for _, l := range ls {
		fmt.Println(l.Job.ID, l.StopReason)
	}
	n, _ := q.Count(ctx, dlq.Filter{StopReason: "failed"})
	fmt.Println(n, "failed")
	// Output:
	// 1 limited
	// 1 failed
}

// limiter refuses every attempt.
type limiter struct{}

func (limiter) Acquire(context.Context, time.Duration) bool { return false }
func (limiter) Record(context.Context, limit.Outcome)       {}

func ExampleLetterID() {
	fmt.Println(dlq.LetterID("llm-jobs", "7"))
	// Output: baabc1e43114f0a6
}

func ExampleLetter_Signature() {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for i, msg := range []string{
		"timeout after 3012ms on 10.0.0.7",
		"timeout after 998ms on 10.0.0.9",
		"job 123e4567-e89b-12d3-a456-426614174000 expired at 2026-11-29T10:06:00Z",
	} {
		l, _ := dlq.NewLetter(dlq.Job{ID: fmt.Sprint(i), Source: "s"}, errors.New(msg), at)
		fmt.Println(l.Signature())
	}
	// Output:
	// *errors.errorString [unclassified] timeout after <n>ms on <addr>
	// *errors.errorString [unclassified] timeout after <n>ms on <addr>
	// *errors.errorString [unclassified] job <uuid> expired at <time>
}

func ExampleGroupLetters() {
	var letters []dlq.Letter
	for i, err := range []error{
		errors.New("timeout after 3012ms on 10.0.0.7"),
		&classify.StatusError{Code: http.StatusUnauthorized},
		errors.New("timeout after 998ms on 10.0.0.9"),
	} {
		l, _ := dlq.NewLetter(dlq.Job{ID: fmt.Sprint(i), Source: "llm-jobs"}, err, time.Unix(int64(i), 0))
		letters = append(letters, l)
	}
	for _, g := range dlq.GroupLetters(letters) {
		fmt.Println(g.Count, g.Signature)
	}
	// Output:
	// 2 *errors.errorString [unclassified] timeout after <n>ms on <addr>
	// 1 *classify.StatusError [http 4xx] http <n> Unauthorized
}

func ExampleReplay() {
	ctx := context.Background()
	q := memQueue()
	for _, id := range []string{"1", "2"} {
		dlq.Record(ctx, q, dlq.Job{ID: id, Source: "llm-jobs", Payload: []byte("job " + id)}, errors.New("model overloaded"))
	}
	// After the fix: send every letter back to the work queue.
	enqueue := dlq.EnqueueFunc(func(ctx context.Context, job dlq.Job) error {
		fmt.Printf("enqueue %s: %s\n", job.ID, job.Payload)
		return nil
	})
	rep, err := dlq.Replay(ctx, q, dlq.Filter{}, enqueue)
	n, _ := q.Count(ctx, dlq.Filter{})
	fmt.Println(len(rep.Replayed), err, n)
	// Output:
	// enqueue 1: job 1
	// enqueue 2: job 2
	// 2 <nil> 0
}

func ExampleNewMemory_list() {
	ctx := context.Background()
	q, _ := dlq.NewMemory(0) // 0: up to 10,000 letters
	dlq.Record(ctx, q, dlq.Job{ID: "1", Source: "llm-jobs"}, errors.New("boom"))
	dlq.Record(ctx, q, dlq.Job{ID: "2", Source: "emails"}, errors.New("boom"))

	ls, _ := q.List(ctx, dlq.Filter{Source: "emails"})
	for _, l := range ls {
		fmt.Println(l.Job.Source, l.Job.ID, l.Last.Error)
	}
	// Output: emails 2 boom
}

func ExampleThresholds() {
	m, _ := dlq.NewMonitor(memQueue(), dlq.MonitorConfig{
		// No size alert; an alert when more than 2 letters arrive within
		// an hour, however many the queue held before.
		Thresholds: dlq.Thresholds{Size: dlq.Off, Growth: 2, Window: time.Hour},
		OnAlert:    func(_ context.Context, a dlq.Alert) { fmt.Println(a.Kind, a.Firing, a) },
		Logger:     slog.New(slog.DiscardHandler),
	})
	ctx := context.Background()
	m.Check(ctx) // the baseline of growth: 0 letters
	for i := range 4 {
		dlq.Record(ctx, m, dlq.Job{ID: fmt.Sprint(i), Source: "llm-jobs"}, errors.New("model overloaded"))
	}
	dlq.Replay(ctx, m, dlq.Filter{}, dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return nil }))
	// Output:
	// growth true dead letter queue grew by 3 letters within 1h0m0s (more than 2)
	// growth false dead letter queue growth back to 2 letters within 1h0m0s (at most 2)
}

func ExampleNewMonitor() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || len(groups) > 0 { // no time, no causes: a stable output

				return slog.Attr{}
			}
			return a
		},
	}))
	m, _ := dlq.NewMonitor(memQueue(), dlq.MonitorConfig{
		Thresholds: dlq.Thresholds{Size: 2, Growth: dlq.Off},
		OnAlert: func(_ context.Context, a dlq.Alert) {
			fmt.Printf("page the team: %v; top cause %q\n", a, a.Groups[0].Signature)
		},
		Logger: logger,
	})
	m.Check(context.Background()) // the baseline of growth: 0 letters
	for i := range 4 {
		dlq.Record(context.Background(), m, dlq.Job{ID: fmt.Sprint(i), Source: "llm-jobs"}, errors.New("model overloaded"))
	}
	// Output:
	// page the team: dead letter queue holds 3 letters (more than 2); top cause "*errors.errorString [unclassified] model overloaded"
	// level=WARN msg="dead letter queue alert" alert=size summary="dead letter queue holds 3 letters (more than 2)" count=3 growth=3 threshold=2 window=1h0m0s
}

func ExampleEncode() {
	l, _ := dlq.NewLetter(dlq.Job{ID: "7", Source: "llm-jobs"}, errors.New("boom"), time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	b, _ := dlq.Encode(l)
	fmt.Println(string(b))
	back, err := dlq.Decode(b)
	fmt.Println(back.ID, err)
	_, err = dlq.Decode([]byte(`{"v":3}`))
	fmt.Println(errors.Is(err, dlq.ErrVersion))
	// Output:
	// {"v":2,"id":"baabc1e43114f0a6","job":{"id":"7","source":"llm-jobs","payload":null},"stop_reason":"failed","attempts":1,"waited_ns":0,"elapsed_ns":0,"retry_after_ns":0,"first_failure":"2026-11-29T10:00:00Z","last_failure":"2026-11-29T10:00:00Z","last":{"attempt":1,"type":"*errors.errorString","error":"boom","verdict":"retry","class":"unclassified","retry_after_ns":0,"limit":0,"timeout":false,"delay_ns":0},"failures":[{"attempt":1,"type":"*errors.errorString","error":"boom","verdict":"retry","class":"unclassified","retry_after_ns":0,"limit":0,"timeout":false,"delay_ns":0}]}
	// baabc1e43114f0a6 <nil>
	// true
}

func ExampleNewMemory() {
	q, err := dlq.NewMemory(1)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	fmt.Println(dlq.Record(ctx, q, dlq.Job{ID: "1", Source: "s"}, errors.New("boom")) != nil)
	err = dlq.Record(ctx, q, dlq.Job{ID: "2", Source: "s"}, errors.New("boom"))
	fmt.Println(errors.Is(err, dlq.ErrFull), errors.Is(err, dlq.ErrDeadLettered)) // not stored: redeliver it

	_, err = dlq.NewMemory(-1)
	fmt.Println(err)
	// Output:
	// true
	// true false
	// dlq.NewMemory(-1): must not be negative (0 means 10,000)
}

func ExampleDecode() {
	for _, rec := range []string{`{"v":1,"id":"x"}`, `{"v":3}`, `not json`} {
		_, err := dlq.Decode([]byte(rec))
		fmt.Println(errors.Is(err, dlq.ErrCorrupt), errors.Is(err, dlq.ErrVersion))
	}
	// Output:
	// true false
	// false true
	// true false
}

func ExampleLetter_Group() {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	a, _ := dlq.NewLetter(dlq.Job{ID: "1", Source: "s"}, errors.New("timeout after 3012ms on 10.0.0.7"), at)
	b, _ := dlq.NewLetter(dlq.Job{ID: "2", Source: "s"}, errors.New("timeout after 998ms on 10.0.0.9"), at)
	c, _ := dlq.NewLetter(dlq.Job{ID: "3", Source: "s"}, &classify.StatusError{Code: http.StatusUnauthorized}, at)
	fmt.Println(a.Group() == b.Group(), a.Group() == c.Group())
	// Output: true false
}

func ExampleMonitor_Watch() {
	shared := memQueue() // in a fleet: a Redis queue every worker writes to
	for i := range 12 {
		dlq.Record(context.Background(), shared, dlq.Job{ID: fmt.Sprint(i), Source: "s"}, errors.New("boom"))
	}
	ctx, stop := context.WithCancelCause(context.Background())
	m, _ := dlq.NewMonitor(shared, dlq.MonitorConfig{
		OnAlert: func(_ context.Context, a dlq.Alert) {
			fmt.Println(a)
			stop(errors.New("seen"))
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	fmt.Println(m.Watch(ctx, time.Minute)) // one process watches for all
	// Output:
	// dead letter queue holds 12 letters (more than 10)
	// seen
}

func ExampleMonitorConfig() {
	// What a metrics module follows: letters added (by source and stop
	// reason), replays and their outcome, the queue's depth.
	added := map[string]int{}
	var depth int
	o := observe.Func(func(_ context.Context, e observe.Event) {
		switch e.Kind {
		case observe.LetterAdded:
			l := e.Detail.(dlq.Letter)
			added[l.Job.Source+" "+l.StopReason]++
		case observe.LetterReplayed:
			fmt.Println("replayed", e.Detail, e.Err)
		case observe.QueueCounted:
			depth = e.Detail.(int)
		}
	})
	m, _ := dlq.NewMonitor(memQueue(), dlq.MonitorConfig{Observer: o, Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	r, _ := retry.New(retry.WithMaxAttempts(2), retry.WithBackoff(backoff.Constant(time.Millisecond)))
	overloaded := func(context.Context) error { return &classify.StatusError{Code: http.StatusServiceUnavailable} }
	dlq.Do(ctx, r, m, dlq.Job{ID: "1", Source: "llm-jobs"}, overloaded)
	dlq.Do(ctx, r, m, dlq.Job{ID: "1", Source: "llm-jobs"}, overloaded) // redelivered: no letter added
	dlq.Record(ctx, m, dlq.Job{ID: "2", Source: "emails"}, errors.New("mailbox full"))
	fmt.Println(added, depth)
	dlq.Replay(ctx, m, dlq.Filter{Source: "emails"}, dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return nil }))
	fmt.Println(depth)
	// Output:
	// map[emails failed:1 llm-jobs max-attempts:1] 2
	// replayed df8dad1278b9df42 <nil>
	// 1
}

// claims is the storage side of a toy queue: a map of records, and the
// token of the replay holding each.
type claims struct {
	records map[string][]byte
	holder  map[string]string
}

func (c *claims) Claim(_ context.Context, id string) (dlq.Claim, error) {
	switch {
	case c.records[id] == nil:
		return dlq.Claim{}, dlq.ErrNotFound
	case c.holder[id] != "":
		return dlq.Claim{}, dlq.ErrClaimed
	}
	c.holder[id] = "token-" + id
	return dlq.Claim{ID: id, Token: c.holder[id], Record: c.records[id]}, nil
}

func (c *claims) Ack(_ context.Context, cl dlq.Claim) error {
	if c.holder[cl.ID] == cl.Token {
		delete(c.records, cl.ID)
		delete(c.holder, cl.ID)
	}
	return nil
}

func (c *claims) Release(_ context.Context, cl dlq.Claim) error {
	if c.holder[cl.ID] == cl.Token {
		delete(c.holder, cl.ID)
	}
	return nil
}

func ExampleReplayClaimed() {
	l, _ := dlq.NewLetter(dlq.Job{ID: "7", Source: "llm-jobs", Payload: []byte("hi")}, errors.New("boom"), time.Now())
	rec, _ := dlq.Encode(l)
	c := &claims{records: map[string][]byte{l.ID: rec}, holder: map[string]string{}}
	ctx := context.Background()

	// A queue's Replay method is one line: the protocol is ReplayClaimed's.
	err := dlq.ReplayClaimed(ctx, c, l.ID, dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return errors.New("broker down") }))
	fmt.Println(err, len(c.records), len(c.holder)) // kept, and released
	err = dlq.ReplayClaimed(ctx, c, l.ID, dlq.EnqueueFunc(func(_ context.Context, j dlq.Job) error {
		fmt.Printf("enqueue %s: %s\n", j.ID, j.Payload)
		return nil
	}))
	fmt.Println(err, len(c.records))
	// Output:
	// dlq: replay baabc1e43114f0a6: broker down 1 0
	// enqueue 7: hi
	// <nil> 0
}

func ExampleSummarize() {
	ctx := context.Background()
	q, _ := dlq.NewMemory(0)
	for i, err := range []error{
		errors.New("timeout after 3012ms on 10.0.0.7"),
		&classify.StatusError{Code: http.StatusUnauthorized},
		errors.New("timeout after 998ms on 10.0.0.9"),
	} {
		l, _ := dlq.NewLetter(dlq.Job{ID: fmt.Sprint(i), Source: "llm-jobs"}, err, time.Unix(int64(i)*3600, 0))
		q.Put(ctx, l)
	}
	// Counts and root causes, added up by the queue itself where it can
	// (SQL in dlq/sqlite, an index in dlq/redis), not by reading every letter.
	s, _ := dlq.Summarize(ctx, q, dlq.Filter{})
	fmt.Println(s.Count, "letters:", s.BySource, s.ByClass)
	for _, g := range s.Groups {
		fmt.Println(g.Count, g.Class, g.Example.Job.ID, g.Histogram[0], g.Histogram[23])
	}
	// Output:
	// 3 letters: map[llm-jobs:3] map[http 4xx:1 unclassified:2]
	// 2 unclassified 2 1 1
	// 1 http 4xx 1 0 0
}
