package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	dlqredis "github.com/retrykit/retry/dlq/redis"
	"github.com/retrykit/retry/dlq/sqlite"
	"github.com/retrykit/retry/internal/redistest"
	"github.com/retrykit/retry/policy"
)

// bin is the dlq binary, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dlq-cli")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "dlq")
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	// The tests' own go-redis clients must be closed: nothing may leak.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

type result struct {
	stdout, stderr string
	code           int
}

// dlqCmd runs the binary, its standard input empty and not a terminal.
func dlqCmd(t *testing.T, args ...string) result {
	t.Helper()
	return dlqWith(t, nil, nil, args...)
}

// dlqWith runs the binary with stdin (nil: empty) and env added to the
// environment.
func dlqWith(t *testing.T, stdin io.Reader, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	// A race-enabled binary otherwise sleeps a second at exit.
	cmd.Env = append(append(os.Environ(), "DLQ_DB=", "DLQ_REDIS=", "GORACE=atexit_sleep_ms=0"), env...)
	cmd.Stdin = stdin
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

func (r result) must(t *testing.T, code int) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	return r
}

func decodeJSON[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("--json printed %q: %v", r.stdout, err)
	}
	return v
}

// decodeLetters reads the letters --json printed, in the dlq encoding.
func decodeLetters(t *testing.T, r result) []dlq.Letter {
	t.Helper()
	var out []dlq.Letter
	for _, rec := range decodeJSON[[]json.RawMessage](t, r) {
		out = append(out, decodeLetter(t, rec))
	}
	return out
}

func decodeLetter(t *testing.T, rec []byte) dlq.Letter {
	t.Helper()
	l, err := dlq.Decode(rec)
	if err != nil {
		t.Fatalf("--json printed %s: %v", rec, err)
	}
	return l
}

var (
	errTimeout1 = errors.New("timeout after 3012ms on 10.0.0.7")
	errTimeout2 = errors.New("timeout after 998ms on 10.0.0.9")
	errTimeout3 = errors.New("timeout after 5ms on 10.0.0.1")
	err401      = &classify.StatusError{Code: http.StatusUnauthorized}
)

// seed dead-letters four jobs: three timeouts (one two days old) and a 401.
func seed(t *testing.T, q dlq.Queue) map[string]dlq.Letter {
	t.Helper()
	now := time.Now()
	jobs := []struct {
		id  string
		err error
		at  time.Time
	}{
		{"old", errTimeout3, now.Add(-48 * time.Hour)},
		{"a", errTimeout1, now},
		{"b", errTimeout2, now},
		{"c", err401, now},
	}
	out := map[string]dlq.Letter{}
	for _, j := range jobs {
		rerr := &retry.Error{Stats: retry.Stats{Attempts: 3, Waited: 30 * time.Millisecond, Elapsed: 40 * time.Millisecond},
			Stop: policy.StopAttempts, Reason: retry.ErrExhausted, Last: j.err, Decision: decision(j.err),
			Failures: []retry.Failure{{Attempt: 1, Err: j.err, Delay: 10 * time.Millisecond}, {Attempt: 2, Err: j.err, Delay: 20 * time.Millisecond}, {Attempt: 3, Err: j.err}}}
		l, _ := dlq.NewLetter(dlq.Job{ID: j.id, Source: "llm-jobs", Payload: []byte("payload " + j.id), Metadata: map[string]string{"tenant": "acme"}}, rerr, j.at)
		if _, err := q.Put(context.Background(), l); err != nil {
			t.Fatal(err)
		}
		out[j.id] = l
	}
	return out
}

func seededFile(t *testing.T) (string, map[string]dlq.Letter) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dlq.db")
	q, err := sqlite.Open(context.Background(), path, sqlite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	return path, seed(t, q)
}

func TestStats(t *testing.T) {
	db, ls := seededFile(t)
	r := dlqCmd(t, "--db", db, "stats").must(t, 0)
	for _, want := range []string{"letters         4", "growth          3 in the last 1h0m0s", "by stop reason  max-attempts 4", "causes          2",
		ls["a"].Group() + "  3      unclassified", ls["c"].Group() + "  1      http 4xx"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stats lacks %q:\n%s", want, r.stdout)
		}
	}
	s := decodeJSON[summary](t, dlqCmd(t, "stats", "--db", db, "--json", "--window", "72h").must(t, 0))
	if s.Count != 4 || s.Growth != 4 || len(s.Groups) != 2 || s.Groups[0].Count != 3 || s.Groups[0].ExampleID == "" || s.BySource["llm-jobs"] != 4 || s.ByStop["max-attempts"] != 4 {
		t.Fatalf("stats --json = %+v", s)
	}
}

func TestLs(t *testing.T) {
	db, ls := seededFile(t)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"everything, oldest first", nil, []string{"old", "a", "b", "c"}},
		{"by class", []string{"--class", "http 4xx"}, []string{"c"}},
		{"by group", []string{"--group", ls["a"].Group()}, []string{"old", "a", "b"}},
		{"since a duration ago", []string{"--since", "1h"}, []string{"a", "b", "c"}},
		{"until a duration ago", []string{"--until", "1h"}, []string{"old"}},
		{"with a limit", []string{"--limit", "2"}, []string{"old", "a"}},
		{"of another source", []string{"--source", "emails"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeLetters(t, dlqCmd(t, append([]string{"--db", db, "--json", "ls"}, tt.args...)...).must(t, 0))
			var jobs []string
			for _, l := range got {
				jobs = append(jobs, l.Job.ID)
			}
			if !slices.Equal(jobs, tt.want) {
				t.Fatalf("ls %v = %v, want %v", tt.args, jobs, tt.want)
			}
		})
	}
	table := dlqCmd(t, "--db", db, "ls").must(t, 0).stdout
	if !strings.HasPrefix(table, "ID  ") || !strings.Contains(table, ls["c"].ID+"  llm-jobs  c    max-attempts  3") {
		t.Fatalf("ls table:\n%s", table)
	}
}

func TestShow(t *testing.T) {
	db, ls := seededFile(t)
	l := ls["a"]
	r := dlqCmd(t, "--db", db, "show", l.ID).must(t, 0)
	for _, want := range []string{"job          a from llm-jobs", "stop reason  max-attempts", "metadata     tenant=acme", "ATTEMPT", "10ms", "payload (9 bytes):\npayload a",
		"last error   *errors.errorString: timeout after 3012ms on 10.0.0.7"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	got := decodeLetter(t, []byte(dlqCmd(t, "--db", db, "show", "--json", l.ID).must(t, 0).stdout))
	if got.ID != l.ID || got.Attempts != 3 || len(got.Failures) != 3 || string(got.Job.Payload) != "payload a" {
		t.Fatalf("show --json = %+v", got)
	}
	if r := dlqCmd(t, "--db", db, "show", "0000000000000000").must(t, 1); !strings.Contains(r.stderr, "letter not found") {
		t.Fatalf("show of an unknown id said %q", r.stderr)
	}
}

func TestReplayThroughACommand(t *testing.T) {
	db, ls := seededFile(t)
	dir := t.TempDir()
	group := ls["a"].Group()

	dry := decodeJSON[map[string]any](t, dlqCmd(t, "--db", db, "--json", "replay", "--group", group, "--dry-run").must(t, 0))
	if len(dry["selected"].([]any)) != 3 {
		t.Fatalf("replay --dry-run = %v; want the three timeouts", dry)
	}
	enqueue := fmt.Sprintf(`cat >> %s/queue && echo " $DLQ_JOB_ID $DLQ_SOURCE $DLQ_METADATA" >> %s/queue`, dir, dir)
	r := dlqCmd(t, "--db", db, "replay", "--group", group, "--exec", enqueue).must(t, 0)
	if !strings.Contains(r.stdout, "replayed 3, skipped 0, lapsed 0, failed 0") {
		t.Fatalf("replay said:\n%s", r.stdout)
	}
	queue, _ := os.ReadFile(filepath.Join(dir, "queue"))
	want := "payload old old llm-jobs {\"tenant\":\"acme\"}\npayload a a llm-jobs {\"tenant\":\"acme\"}\npayload b b llm-jobs {\"tenant\":\"acme\"}\n"
	if string(queue) != want {
		t.Fatalf("the enqueue command received:\n%s\nwant\n%s", queue, want)
	}
	r = dlqCmd(t, "--db", db, "--json", "replay", "--id", ls["c"].ID, "--exec", "exit 3").must(t, 1)
	if out := decodeJSON[replayOut](t, r); len(out.Failed) != 1 || !strings.Contains(out.Failed[ls["c"].ID], "exit status 3") {
		t.Fatalf("a failed enqueue reported %+v", out)
	}
	left := decodeLetters(t, dlqCmd(t, "--db", db, "--json", "ls").must(t, 0))
	if len(left) != 1 || left[0].ID != ls["c"].ID {
		t.Fatalf("letters left: %v; want only the 401, whose enqueue failed", left)
	}
}

func TestPurge(t *testing.T) {
	db, _ := seededFile(t)
	if r := dlqCmd(t, "--db", db, "purge", "--all", "--dry-run").must(t, 0); !strings.Contains(r.stdout, "would purge 4 letters") {
		t.Fatalf("purge --dry-run said:\n%s", r.stdout)
	}
	if r := dlqCmd(t, "--db", db, "purge", "--until", "24h").must(t, 0); r.stdout != "purged 1 letters\n" {
		t.Fatalf("purge --until 24h said %q", r.stdout)
	}
	if got := decodeJSON[map[string]int](t, dlqCmd(t, "--db", db, "--json", "purge", "--all", "--yes").must(t, 0)); got["purged"] != 3 {
		t.Fatalf("purge --all = %v", got)
	}
}

func TestUsageErrors(t *testing.T) {
	db, _ := seededFile(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no queue", []string{"stats"}, "no queue"},
		{"two queues", []string{"--db", db, "--redis", "redis://127.0.0.1:1", "stats"}, "two queues"},
		{"an unknown command", []string{"--db", db, "frobnicate"}, `unknown command "frobnicate"`},
		{"a replay without a selection", []string{"--db", db, "replay"}, "one of --id, --group or --all"},
		{"a SQLite replay without a command", []string{"--db", db, "replay", "--all"}, "give --exec CMD"},
		{"a purge without a selection", []string{"--db", db, "purge"}, "purge needs --all"},
		{"a purge of all and some", []string{"--db", db, "purge", "--all", "--source", "x"}, "not both"},
		{"a bad time", []string{"--db", db, "ls", "--since", "yesterday"}, "RFC 3339"},
		{"the old name of --stop-reason", []string{"--db", db, "ls", "--reason", "budget"}, "flag provided but not defined: -reason"},
		{"show without an id", []string{"--db", db, "show"}, "needs a letter id"},
		{"an unknown flag", []string{"--db", db, "ls", "--nope"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" exits 2", func(t *testing.T) {
			if r := dlqCmd(t, tt.args...).must(t, 2); !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("stderr %q lacks %q", r.stderr, tt.want)
			}
		})
	}
}

func TestRedis(t *testing.T) {
	s := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr})
	defer c.Close()
	q, _ := dlqredis.New(c, dlqredis.Config{})
	ls := seed(t, q)
	url := "redis://" + s.Addr

	st := decodeJSON[summary](t, dlqCmd(t, "--redis", url, "--json", "stats").must(t, 0))
	if st.Count != 4 || st.Growth != 3 || len(st.Groups) != 2 {
		t.Fatalf("stats = %+v", st)
	}
	dlqCmd(t, "--redis", url, "show", ls["c"].ID).must(t, 0)
	r := dlqCmd(t, "--redis", url, "replay", "--group", ls["a"].Group()).must(t, 0)
	if !strings.Contains(r.stdout, "replayed 3, skipped 0, lapsed 0, failed 0") {
		t.Fatalf("replay said:\n%s", r.stdout)
	}
	got, _ := c.LRange(context.Background(), "llm-jobs", 0, -1).Result()
	if !slices.Equal(got, []string{"payload b", "payload a", "payload old"}) {
		t.Fatalf("the source list holds %q", got)
	}
	if r := dlqCmd(t, "--redis", url, "--json", "ls").must(t, 0); len(decodeLetters(t, r)) != 1 {
		t.Fatalf("ls after the replay: %s", r.stdout)
	}
	dlqCmd(t, "--redis", url, "purge", "--all", "--yes").must(t, 0)
	if n, _ := c.ZCard(context.Background(), "{dlq}:order").Result(); n != 0 {
		t.Fatalf("%d letters after purge --all", n)
	}
	if r := dlqCmd(t, "--redis", "redis://127.0.0.1:1", "stats").must(t, 1); !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Fatalf("an unreachable Redis said %q", r.stderr)
	}
}

// decision classifies err as a Retrier with no options would.
func decision(err error) classify.Decision {
	if d := classify.Default(err); d.Verdict != classify.NoOpinion {
		return d
	}
	return classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnclassified}
}
