package dlqdashboard

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/dashboard"
	"github.com/retrykit/retry/dlq/sqlite"
	"github.com/retrykit/retry/policy"
)

// letters is the size of the queue measured.
const letters = 100_000

// causes are the root causes of the queue, their shares of its letters
// adding up to 1: a few large groups, some small, one of a single letter
// (the one a scan finds last).
var causes = []struct {
	share float64
	err   func(i int) error
	stop  policy.Stop
}{
	{0.40, func(i int) error { return &classify.StatusError{Code: http.StatusTooManyRequests} }, policy.StopBudget},
	{0.25, func(i int) error { return fmt.Errorf("timeout after %dms on 10.0.%d.%d", 3000+i%977, i%7, i%250) }, policy.StopAttempts},
	{0.15, func(i int) error { return &classify.StatusError{Code: http.StatusServiceUnavailable} }, policy.StopElapsed},
	{0.10, func(i int) error { return fmt.Errorf("dial tcp 10.1.2.%d:443: connect: connection refused", i%250) }, policy.StopAttempts},
	{0.05, func(i int) error { return &classify.StatusError{Code: http.StatusUnauthorized} }, policy.StopPermanent},
	{0.04, func(i int) error { return fmt.Errorf("decode job %d: unexpected end of JSON input", i) }, policy.StopPermanent},
	{0.01, func(i int) error {
		return errors.New("tls: failed to verify certificate: x509: certificate has expired")
	}, policy.StopAttempts},
}

var sources = []string{"llm-jobs", "emails", "webhooks", "billing"}

var (
	seedOnce sync.Once
	seedPath string
	seedErr  error
	// rare is the group of the last letter put: one letter, found last by
	// a scan.
	rare, large string
)

// queue opens the seeded file, made once per process.
func queue(b *testing.B) *sqlite.Queue {
	b.Helper()
	seedOnce.Do(func() { seedPath, seedErr = seed() })
	if seedErr != nil {
		b.Fatal(seedErr)
	}
	q, err := sqlite.Open(context.Background(), seedPath, sqlite.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { q.Close() })
	return q
}

func TestMain(m *testing.M) {
	code := m.Run()
	if seedPath != "" {
		os.RemoveAll(filepath.Dir(seedPath))
	}
	os.Exit(code)
}

// seed writes the queue: Put's own rows, in one transaction (a Put is one
// durable transaction each, and 100,000 of them would measure the disk).
func seed() (string, error) {
	dir, err := os.MkdirTemp("", "dlqdashboard")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "dlq.db")
	q, err := sqlite.Open(context.Background(), path, sqlite.Config{})
	if err != nil {
		return "", err
	}
	q.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return "", err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	stmt, err := tx.Prepare(`INSERT INTO dlq_letters (id, source, job_id, stop_reason, class, attempts, first_failure, last_failure, last_error, grp, record)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return "", err
	}
	start := time.Now().Add(-7 * 24 * time.Hour)
	for i := range letters {
		l := letter(i, start.Add(time.Duration(i)*7*24*time.Hour/letters))
		rec, err := dlq.Encode(l)
		if err != nil {
			return "", err
		}
		const layout = "2006-01-02T15:04:05.000000000Z"
		_, err = stmt.Exec(l.ID, l.Job.Source, l.Job.ID, l.StopReason, l.Last.Decision.Reason, l.Attempts,
			l.FirstFailure.UTC().Format(layout), l.LastFailure.UTC().Format(layout), l.Last.Error, l.Group(), string(rec))
		if err != nil {
			return "", err
		}
	}
	return path, tx.Commit()
}

// letter is the i-th letter: its cause by the shares, the last one alone.
func letter(i int, at time.Time) dlq.Letter {
	c := causes[len(causes)-1]
	if i < letters-1 {
		x := float64(i%1000) / 1000
		for _, cc := range causes[:len(causes)-1] {
			if c = cc; x < cc.share {
				break
			}
			x -= cc.share
		}
	}
	err := c.err(i)
	d := classify.Default(err)
	if d.Verdict == classify.NoOpinion {
		d = classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnclassified}
	}
	rerr := &retry.Error{Stats: retry.Stats{Attempts: 3, Waited: 1500 * time.Millisecond, Elapsed: 2 * time.Second},
		Stop: c.stop, Reason: retry.ErrExhausted, Last: err, Decision: d,
		Failures: []retry.Failure{{Attempt: 1, Err: err, Decision: d, Delay: 500 * time.Millisecond},
			{Attempt: 2, Err: err, Decision: d, Delay: time.Second}, {Attempt: 3, Err: err, Decision: d}}}
	job := dlq.Job{ID: fmt.Sprintf("job-%06d", i), Source: sources[i%len(sources)],
		Payload:  []byte(fmt.Sprintf(`{"job":%d,"tenant":"t-%d","input":"summarize the attached document, please"}`, i, i%97)),
		Metadata: map[string]string{"tenant": fmt.Sprintf("t-%d", i%97), "trace": fmt.Sprintf("%016x", i*7919)}}
	l, _ := dlq.NewLetter(job, rerr, at)
	if i == letters-1 {
		rare = l.Group()
	}
	if i == 0 {
		large = l.Group()
	}
	return l
}

// get serves one page and fails unless it is a 200.
func get(b *testing.B, h http.Handler, path string) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	if w.Code != http.StatusOK {
		b.Fatalf("GET %s: %d\n%s", path, w.Code, w.Body)
	}
}

func handler(b *testing.B, q dlq.Queue) http.Handler {
	d, err := dashboard.New(q, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// loop runs op b.N times and reports, beside the wall time, the CPU time
// an op used (cpu-ms/op): what the wall time is on a machine to itself,
// whose other work a shared one's wall time also counts.
func loop(b *testing.B, op func()) {
	b.ResetTimer()
	start, n := cpuTime(), 0
	for b.Loop() {
		op()
		n++
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(n), "cpu-ms/op")
}

// BenchmarkOverview100k renders the overview: counts, breakdowns and every
// root cause with its histogram, added up in SQL.
func BenchmarkOverview100k(b *testing.B) {
	h := handler(b, queue(b))
	loop(b, func() { get(b, h, "/") })
}

// BenchmarkGroupFirstPage100k renders the first page of the largest root
// cause (40,000 letters) and of the rarest (one letter, put last).
func BenchmarkGroupFirstPage100k(b *testing.B) {
	h := handler(b, queue(b))
	for _, g := range []struct{ name, id string }{{"largest", large}, {"rarest", rare}} {
		b.Run(g.name, func(b *testing.B) {
			loop(b, func() { get(b, h, "/group?group="+g.id) })
		})
	}
}

// listOnly hides the queue's Summarize and its SQL filters' speed: the
// baseline of reading every letter, as the CLI's stats did.
type listOnly struct{ dlq.Queue }

// BenchmarkOverviewFromEveryLetter100k is the baseline: the same page from
// every letter read and decoded.
func BenchmarkOverviewFromEveryLetter100k(b *testing.B) {
	h := handler(b, listOnly{queue(b)})
	loop(b, func() { get(b, h, "/") })
}

// BenchmarkSummarize100k is the overview's one big query: dlq.Summarize.
func BenchmarkSummarize100k(b *testing.B) {
	q := queue(b)
	loop(b, func() {
		if _, err := dlq.Summarize(context.Background(), q, dlq.Filter{}); err != nil {
			b.Fatal(err)
		}
	})
}
