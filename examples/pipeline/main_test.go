package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/sqlite"
	"github.com/retrykit/retry/idempotency"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives its tests: a server, a
// client's connections, a worker.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// result is one run of the program, as a user sees it and as it left the
// database.
type result struct {
	out    outcome
	json   totals // the last line of the output
	output string
	db     *sql.DB
	path   string
}

// runPipeline runs the program with args (plus a -db in a temporary
// directory) and checks what every run promises, whatever the flags.
func runPipeline(t *testing.T, args ...string) result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pipeline.db")
	cfg, err := parseFlags(append(args, "-db", path), io.Discard)
	if err != nil {
		t.Fatalf("parseFlags(%q): %v", args, err)
	}
	var buf bytes.Buffer
	out, err := run(t.Context(), &buf, cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, buf.String())
	}
	r := result{out: out, output: buf.String(), path: path}
	r.json = lastLine(t, r.output)
	if r.json != out.totals {
		t.Errorf("the JSON line says %+v, run returned %+v", r.json, out.totals)
	}
	r.db, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.db.Close() })
	if strings.Contains(r.output, "FAILED") && !cfg.noClaim {
		t.Errorf("a check failed:\n%s", r.output)
	}
	return r
}

// lastLine parses the last line of the output: one JSON object with exactly
// the documented keys, in order.
func lastLine(t *testing.T, output string) totals {
	t.Helper()
	lines := strings.Split(strings.TrimRight(output, "\n"), "\n")
	last := lines[len(lines)-1]
	shape := `^\{"jobs":\d+,"done":\d+,"partial":\d+,"dead_lettered":\d+,"llm_calls":\d+,"llm_generations":\d+,"emails_sent":\d+,"duplicate_emails":\d+\}$`
	if !regexp.MustCompile(shape).MatchString(last) {
		t.Fatalf("last line %q does not match %s", last, shape)
	}
	var got totals
	if err := json.Unmarshal([]byte(last), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// checkInvariants checks, from the JSON line, the database, the dead letter
// queue and the mail server's deliveries, that every job ended in exactly one
// outcome, and that the email went once to every done job and to no other.
func checkInvariants(t *testing.T, r result) {
	t.Helper()
	j := r.json
	if j.Done+j.Partial+j.DeadLettered != j.Jobs {
		t.Errorf("done %d + partial %d + dead_lettered %d != jobs %d", j.Done, j.Partial, j.DeadLettered, j.Jobs)
	}
	if j.DuplicateEmails != 0 || j.EmailsSent != j.Done {
		t.Errorf("emails_sent %d for %d done jobs, duplicate_emails %d; want one email per done job", j.EmailsSent, j.Done, j.DuplicateEmails)
	}
	// A job's generation is billed once, whatever its retries and
	// redeliveries: the key derived from the job replays it.
	if r.out.duplicateGenerations != 0 || j.LLMGenerations > j.Jobs {
		t.Errorf("llm_generations %d for %d jobs, %d billed twice; want at most one per job", j.LLMGenerations, j.Jobs, r.out.duplicateGenerations)
	}
	for query, want := range map[string]int{
		`SELECT count(*) FROM jobs`:                                  j.Jobs,
		`SELECT count(*) FROM jobs WHERE status = 'done'`:            j.Done,
		`SELECT count(*) FROM jobs WHERE status = 'partial_success'`: j.Partial,
		`SELECT count(*) FROM jobs WHERE status = 'dead_lettered'`:   j.DeadLettered,
		`SELECT count(*) FROM dlq_letters`:                           j.DeadLettered,
		// A done job has its answer and an email sent under its claim.
		`SELECT count(*) FROM jobs WHERE status = 'done' AND (result IS NULL OR email_status IS NOT 'sent'
			OR email_sent_at IS NULL)`: 0,
		// A partial job has its answer; its email failed after 1 to 3
		// attempts (3 unless the server said 4xx), and its claim was released.
		`SELECT count(*) FROM jobs WHERE status = 'partial_success' AND (result IS NULL OR email_status IS NOT 'failed'
			OR email_sent_at IS NOT NULL OR email_attempts NOT BETWEEN 1 AND 3
			OR (last_error LIKE 'http 5%' AND email_attempts != 3))`: 0,
		// A dead-lettered job has no answer, no email, and the letter it names.
		`SELECT count(*) FROM jobs j WHERE status = 'dead_lettered' AND (result IS NOT NULL
			OR email_sent_at IS NOT NULL OR NOT EXISTS (SELECT 1 FROM dlq_letters l
			WHERE l.id = j.letter_id AND l.job_id = CAST(j.id AS TEXT)))`: 0,
	} {
		if got := count(t, r.db, query); got != want {
			t.Errorf("%s\n= %d, want %d", query, got, want)
		}
	}
	checkEmailsPerJob(t, r)
}

// checkEmailsPerJob compares what the mail server delivered to each job with
// the job's outcome: one email to a done job, none to another — but for a job
// dead-lettered with its email's fate unknown (the claim still held), which
// may have got one.
func checkEmailsPerJob(t *testing.T, r result) {
	t.Helper()
	rows, err := r.db.Query(`SELECT id, status, coalesce(email_status, '') FROM jobs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var status, email string
		if err := rows.Scan(&id, &status, &email); err != nil {
			t.Fatal(err)
		}
		want := 0
		if status == statusDone {
			want = 1
		}
		if got := r.out.emailsPerJob[id]; got > 1 || got != want && !(status == statusDead && email == "sending") {
			t.Errorf("job %d is %s and the mail server delivered %d emails for it, want %d", id, status, got, want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, db *sql.DB, query string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// printed returns the number that re captures in the output.
func printed(t *testing.T, r result, re string) int {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(r.output)
	if m == nil {
		t.Fatalf("output does not match %s:\n%s", re, r.output)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestNothingFailing(t *testing.T) {
	t.Parallel()
	r := runPipeline(t, "-jobs", "200", "-fail-rate", "0")
	checkInvariants(t, r)
	if r.json.Done != 200 {
		t.Errorf("done = %d, want every job", r.json.Done)
	}
	// One call per job, plus one per worker that died after the LLM call
	// and before saving the answer: its redelivery asks again, with the same
	// key, and gets the generation back without paying for another.
	lost := printed(t, r, `(\d+) after the LLM call`)
	if lost == 0 || r.json.LLMCalls != 200+lost {
		t.Errorf("llm_calls = %d, want 200 + %d (and some answers lost)", r.json.LLMCalls, lost)
	}
	if r.json.LLMGenerations != 200 {
		t.Errorf("llm_generations = %d, want one per job: 200", r.json.LLMGenerations)
	}
	if replayed := printed(t, r, `; (\d+) calls replayed a generation kept under their key`); replayed != lost {
		t.Errorf("%d calls replayed a kept generation, want one per lost answer: %d", replayed, lost)
	}
}

func TestEverythingFailing(t *testing.T) {
	t.Parallel()
	r := runPipeline(t, "-jobs", "200", "-fail-rate", "1")
	checkInvariants(t, r)
	if r.json.DeadLettered != 200 || r.json.LLMCalls != 3*200 || r.json.LLMGenerations != 0 || r.json.EmailsSent != 0 {
		t.Errorf("got %+v; want every job dead-lettered after 3 LLM calls, nothing generated, no email", r.json)
	}
	q := `SELECT count(*) FROM dlq_letters WHERE attempts != 3 OR stop_reason != 'max-attempts'`
	if n := count(t, r.db, q); n != 0 {
		t.Errorf("%d letters were not dead-lettered after 3 attempts", n)
	}
}

// TestDocumentedRun runs the command of the README and checks that its last
// line is the README's, and that every path of the exercise was taken.
func TestDocumentedRun(t *testing.T) {
	t.Parallel()
	r := runPipeline(t, "-jobs", "1000", "-fail-rate", "0.3", "-seed", "7")
	checkInvariants(t, r)
	checkREADME(t, r.output)
	if r.json.Done == 0 || r.json.Partial == 0 || r.json.DeadLettered == 0 {
		t.Errorf("got %+v; want some jobs of every outcome", r.json)
	}
	if n := printed(t, r, `: (\d+) delivered \(recorded, not resent\)`); n == 0 {
		t.Error("no redelivery found its email delivered by the worker that died")
	}
	if n := printed(t, r, `, (\d+) not \(claim taken over, sent\)`); n == 0 {
		t.Error("no redelivery took over a claim whose email was never sent")
	}
	checkRetryAfter(t, r.path)
}

// checkREADME checks that the README shows the output of the run, but for
// the time it took and the temporary file's name.
func checkREADME(t *testing.T, output string) {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, shown, ok := strings.Cut(string(readme), "## Output\n\n```\n")
	shown, _, _ = strings.Cut(shown, "```")
	mask := regexp.MustCompile(`(?m)^took .*$`)
	want, got := mask.ReplaceAllString(shown, "took …"), mask.ReplaceAllString(output, "took …")
	if !ok || want != got {
		t.Errorf("README.md shows another output than the run's:\n%s", got)
	}
	line := output[strings.LastIndex(strings.TrimSuffix(output, "\n"), "\n")+1:]
	if !strings.Contains(string(readme), "\n"+line) {
		t.Errorf("README.md does not show the last line of the run: %s", line)
	}
}

// checkRetryAfter checks in the dead letters that every 429 was followed by a
// wait at least as long as its Retry-After, read on the run's clock.
func checkRetryAfter(t *testing.T, path string) {
	t.Helper()
	q, err := sqlite.Open(t.Context(), path, sqlite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	letters, err := q.List(t.Context(), dlq.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, l := range letters {
		for _, f := range l.Failures {
			if f.Decision.Reason != classify.ReasonTooManyRequests || f.Delay == 0 {
				continue
			}
			seen++
			if ra := f.Decision.RetryAfter; ra < time.Millisecond || ra > 5*time.Millisecond || f.Delay < ra {
				t.Errorf("job %s attempt %d: Retry-After %v (want 1–5s ÷1000), waited %v", l.Job.ID, f.Attempt, ra, f.Delay)
			}
		}
	}
	if seen == 0 {
		t.Error("no 429 followed by a wait in the dead letters")
	}
}

func TestRunsDoNotDependOnScheduling(t *testing.T) {
	t.Parallel()
	args := []string{"-jobs", "200", "-fail-rate", "0.3", "-seed", "3"}
	one := runPipeline(t, append(args, "-workers", "1")...)
	many := runPipeline(t, append(args, "-workers", "16")...)
	if one.json != many.json {
		t.Errorf("1 worker: %+v\n16 workers: %+v", one.json, many.json)
	}
	q := `SELECT group_concat(id || ':' || status || ':' || llm_attempts || ':' || email_attempts, ' ') FROM jobs`
	var a, b string
	if err := one.db.QueryRow(q).Scan(&a); err != nil {
		t.Fatal(err)
	}
	if err := many.db.QueryRow(q).Scan(&b); err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("the jobs table differs between 1 and 16 workers")
	}
}

// TestWithoutTheClaimRedeliveriesSendTwice shows that the checks can see a
// duplicate: without the claim, a job whose worker died after sending gets
// its email twice.
func TestWithoutTheClaimRedeliveriesSendTwice(t *testing.T) {
	t.Parallel()
	r := runPipeline(t, "-jobs", "200", "-fail-rate", "0", "-redeliver", "0.5", "-no-claim")
	sentTwice := printed(t, r, `(\d+) after sending the email`)
	if sentTwice == 0 || r.json.DuplicateEmails != sentTwice {
		t.Errorf("duplicate_emails = %d, want one per worker that died after sending (%d)", r.json.DuplicateEmails, sentTwice)
	}
	if !strings.Contains(r.output, "FAILED (as expected with -no-claim) no email delivered twice") {
		t.Errorf("the output does not flag the duplicates:\n%s", r.output)
	}
}

// TestTheGatewayBillsAKeyedGenerationOnce checks the fake gateway that the
// llm_generations count comes from: a keyless repeat is a second, billed
// generation; a keyed one is the first replayed; the key with another request
// is refused.
func TestTheGatewayBillsAKeyedGenerationOnce(t *testing.T) {
	g := newGateway(chaos{seed: 7}) // fail rate 0: every prompt answered
	srv := httptest.NewServer(g)
	defer srv.Close()
	call := func(key, prompt string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"job":1,"prompt":"`+prompt+`"}`))
		if key != "" {
			req.Header.Set(idempotency.HeaderKey, key)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("Idempotent-Replay")
	}
	for i, c := range []struct {
		key, prompt string
		status      int
		replay      string
		generations int
	}{
		{"", "ticket #1", 200, "", 1},
		{"", "ticket #1", 200, "", 2}, // no key: billed again
		{"k", "ticket #1", 200, "", 3},
		{"k", "ticket #1", 200, "true", 3}, // the key's generation, replayed
		{"k", "ticket #2", 422, "", 3},
	} {
		status, replay := call(c.key, c.prompt)
		if generations, _, _ := g.billed(); status != c.status || replay != c.replay || generations != c.generations {
			t.Errorf("call %d (key %q): %d, replay %q, %d generations billed; want %d, %q, %d",
				i+1, c.key, status, replay, generations, c.status, c.replay, c.generations)
		}
	}
	if _, duplicates, replays := g.billed(); duplicates != 2 || replays != 1 {
		t.Errorf("%d duplicates and %d replays; want 2 and 1", duplicates, replays)
	}
}

func TestFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	want := config{jobs: 1000, failRate: 0.3, seed: 7, redeliver: 0.1, speed: 1000, workers: 8}
	if err != nil || cfg != want {
		t.Errorf("defaults: %+v, %v; want %+v", cfg, err, want)
	}
	for _, args := range [][]string{
		{"-jobs", "0"}, {"-fail-rate", "1.5"}, {"-fail-rate", "NaN"}, {"-redeliver", "-0.1"},
		{"-speed", "0"}, {"-speed", "1000000"}, {"-workers", "0"}, {"-bogus"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
}

func TestPoliciesAreThePresetsOnTheRunsClock(t *testing.T) {
	st, err := steps(1000)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]backoff.Exponential{
		"llm":   {Base: 2 * time.Millisecond, Factor: 2, MaxDelay: 60 * time.Millisecond},
		"db":    {Base: 100 * time.Microsecond, Factor: 2, MaxDelay: time.Millisecond},
		"email": {Base: time.Millisecond, Factor: 2, MaxDelay: 10 * time.Millisecond},
	}
	for _, s := range st {
		if s.policy.Backoff != want[s.name] || s.policy.MaxAttempts != 3 {
			t.Errorf("%s: %d attempts, %+v; want 3, %+v", s.name, s.policy.MaxAttempts, s.policy.Backoff, want[s.name])
		}
	}
	if !st[0].policy.Strict || st[0].policy.MaxDelay != 60*time.Millisecond {
		t.Errorf("llm: %+v; want strict, max wait 60ms", st[0].policy)
	}
	err = onRunClock(&classify.StatusError{Code: 429, Header: http.Header{"Retry-After": {"2"}}}, 1000)
	if d := classify.Default(err); d.Verdict != classify.Retry || d.RetryAfter != 2*time.Millisecond {
		t.Errorf("Retry-After: 2 at ÷1000: %v; want retry after 2ms", d)
	}
	if d := classify.Server(err); d.RetryAfter != 2*time.Millisecond {
		t.Errorf("Retry-After: 2 at ÷1000, as the server said: %v; want a wait of 2ms", d)
	}
}
