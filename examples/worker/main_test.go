package main

import (
	"bytes"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry/internal/redistest"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives its tests: a server, a
// client's connections, a worker.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// want is the output after the first line, which differs between runs only
// by the server's port.
const want = `enqueue: 12 submissions of 10 documents → 10 jobs queued, 2 duplicates rejected (same key → same job id)
pass 1: 3 workers took 10 messages: 6 done (1 after a retry), 4 dead-lettered; 2 acks lost (worker died before acknowledging)
alert (firing): dead letter queue holds 4 letters (more than 3)
redelivery: 2 unacknowledged messages delivered again → 2 skipped (job id already claimed), 0 processed again
dlq: 4 letters, 2 root causes:
  3 × max-attempts after 3 attempt(s): syscall.Errno [connection refused] dial tcp <addr>: connect: connection refused
  1 × permanent after 1 attempt(s): *classify.StatusError [http 4xx] translate doc-<n>: http <n> Unprocessable Entity (unsupported-language)
fix: the translator's replica is back, and it speaks Basque now
alert (resolved as the replay took the letters out): dead letter queue back to 3 letters (at most 3)
replay: 4 letters back on llm-jobs, attempts reset → 4 done, 0 dead-lettered; the dlq holds 0
total: 10 jobs, 10 done exactly once (10 side effects); left: 0 queued, 0 processing, 0 dead letters
`

func TestWorker(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	var out bytes.Buffer
	if err := run(ctx, &out, discard(), srv.Addr); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	// The run's keys are gone: a Redis the example was pointed at keeps
	// nothing of it.
	if n := dbsize(t, srv.Addr); n != 0 {
		t.Errorf("%d keys left in Redis, want 0", n)
	}
}

func TestWorkerStartsItsOwnRedis(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv(redistest.RequireEnv) == "1" {
			t.Fatalf("redis-server not found and %s=1: %v", redistest.RequireEnv, err)
		}
		t.Skipf("redis-server not found on PATH (%s=1 makes this a failure): %v", redistest.RequireEnv, err)
	}
	ctx := t.Context()
	var out bytes.Buffer
	if err := run(ctx, &out, discard(), ""); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	first, rest, _ := strings.Cut(out.String(), "\n")
	m := regexp.MustCompile(`^redis: no -redis given: started redis-server on (127\.0\.0\.1:\d+) \(stopped on exit\)$`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("first line %q does not say which redis-server was started", first)
	}
	if rest != want {
		t.Errorf("output:\n%s\nwant:\n%s", rest, want)
	}
	if conn, err := net.DialTimeout("tcp", m[1], time.Second); err == nil {
		conn.Close()
		t.Errorf("redis-server on %s still accepts connections after run returned", m[1])
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// dbsize asks the server how many keys it holds.
func dbsize(t *testing.T, addr string) int64 {
	t.Helper()
	rdb := goredis.NewClient(&goredis.Options{Addr: addr})
	defer rdb.Close()
	n, err := rdb.DBSize(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}
