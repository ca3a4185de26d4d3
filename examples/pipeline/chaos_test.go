package main

import (
	"bytes"
	"database/sql"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	faults "github.com/retrykit/retry/chaos"
)

// TestNoJobIsBilledTwiceUnderResetsAfterSend runs the pipeline with 20 % of
// its calls to the LLM gateway reset after the gateway processed them: the
// client sees a connection reset and cannot know whether the generation was
// billed, so it calls again. The call's idempotency key must keep every job
// to one billed generation, whatever the retries and redeliveries.
func TestNoJobIsBilledTwiceUnderResetsAfterSend(t *testing.T) {
	s, err := faults.New(faults.Config{Seed: 26, Rules: []faults.Rule{{Fault: faults.ResetAfterSend(), Rate: 0.2}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseFlags([]string{"-jobs", "200", "-fail-rate", "0", "-db", filepath.Join(t.TempDir(), "pipeline.db")}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.network = onTheGateway{s}
	var out bytes.Buffer
	res, err := run(t.Context(), &out, cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	st := s.Stats()
	if st.Lost < 40 {
		t.Fatalf("only %d answers were lost in %d requests: the scenario did not bite", st.Lost, st.Processed)
	}
	if res.duplicateGenerations != 0 || res.LLMGenerations > res.Jobs {
		t.Errorf("%d generations billed for %d jobs, %d billed twice; want at most one per job", res.LLMGenerations, res.Jobs, res.duplicateGenerations)
	}
	if res.LLMCalls <= res.LLMGenerations {
		t.Errorf("%d calls for %d generations: no call was repeated after a reset, and replayed", res.LLMCalls, res.LLMGenerations)
	}
	if res.Done+res.Partial+res.DeadLettered != res.Jobs {
		t.Errorf("done %d + partial %d + dead-lettered %d != %d jobs", res.Done, res.Partial, res.DeadLettered, res.Jobs)
	}
	t.Logf("%d requests processed, %d answers lost; %+v", st.Processed, st.Lost, res.totals)
}

// onTheGateway puts the scenario on the calls to the LLM gateway only: the mail
// server's paths all start with /messages.
type onTheGateway struct{ s *faults.Scenario }

func (g onTheGateway) Transport(base http.RoundTripper) http.RoundTripper {
	faulty := g.s.Transport(base)
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if strings.HasPrefix(req.URL.Path, "/messages") {
			return base.RoundTrip(req)
		}
		return faulty.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestEveryEmailIsSentOnceUnderFaultsOnEveryRequest runs the pipeline, with
// its own failures and crashed workers, under faults on every request to
// both servers: a fifth of them reset after the server processed them, a
// few more reset before sending, time out after the server processed them,
// or meet a 503. A send whose answer was lost may have been delivered; a
// lookup in the message log may fail too. No email may go out twice, no
// generation be billed twice, and every job must end in one outcome, the
// email delivered to the done jobs and to no other.
func TestEveryEmailIsSentOnceUnderFaultsOnEveryRequest(t *testing.T) {
	s, err := faults.New(faults.Config{Seed: 26, Rules: []faults.Rule{
		{Fault: faults.ResetAfterSend(), Rate: 0.2},
		{Fault: faults.ResetBeforeSend(), Rate: 0.03},
		{Fault: faults.Timeout(time.Millisecond), Rate: 0.03},
		{Fault: faults.Throttle(http.StatusServiceUnavailable, time.Second), Rate: 0.03},
	}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pipeline.db")
	cfg, err := parseFlags([]string{"-jobs", "200", "-db", path}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.network = s
	var out bytes.Buffer
	res, err := run(t.Context(), &out, cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if st := s.Stats(); st.Lost < 60 {
		t.Fatalf("only %d answers were lost in %d requests: the scenario did not bite", st.Lost, st.Processed)
	}
	if res.duplicateGenerations != 0 || res.DuplicateEmails != 0 {
		t.Errorf("%d generations and %d emails beyond the first of a job; want none", res.duplicateGenerations, res.DuplicateEmails)
	}
	if res.Done+res.Partial+res.DeadLettered != res.Jobs {
		t.Errorf("done %d + partial %d + dead-lettered %d != %d jobs", res.Done, res.Partial, res.DeadLettered, res.Jobs)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := result{out: res, db: db, output: out.String()}
	checkEmailsPerJob(t, r)
	// Most lost answers are settled by the next attempt's lookup; these
	// deliveries met one that was not, and left it to a redelivery.
	if n := printed(t, r, `redelivered (\d+) messages whose email may have gone out`); n == 0 {
		t.Error("no delivery was left not knowing whether its email went out")
	}
	t.Logf("%+v; %+v", res.totals, s.Stats())
}

// TestAnEmailWhoseFateStaysUnknownIsDeadLetteredNotSentAgain resets every
// request to the mail server after the server processed it: each email is
// delivered by its first send, and neither that answer nor any lookup in the
// message log ever comes back. No delivery can tell whether the email went
// out, so none sends it again: each leaves the message to the next, and the
// last one the queue allows dead-letters the job, its claim kept.
func TestAnEmailWhoseFateStaysUnknownIsDeadLetteredNotSentAgain(t *testing.T) {
	s, err := faults.New(faults.Config{Rules: []faults.Rule{{Fault: faults.ResetAfterSend()}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pipeline.db")
	cfg, err := parseFlags([]string{"-jobs", "20", "-fail-rate", "0", "-redeliver", "0", "-db", path}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.network = onTheMailServer{s}
	var out bytes.Buffer
	res, err := run(t.Context(), &out, cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if res.DeadLettered != 20 || res.EmailsSent != 20 || res.DuplicateEmails != 0 {
		t.Errorf("%+v; want every job dead-lettered, its email delivered once", res.totals)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := `SELECT count(*) FROM jobs WHERE status = 'dead_lettered' AND deliveries = ? AND result IS NOT NULL
		AND email_status = 'sending' AND email_sent_at IS NOT NULL AND letter_id IS NOT NULL`
	var n int
	if err := db.QueryRow(q, maxDeliveries).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 20 {
		t.Errorf("%d jobs dead-lettered after %d deliveries with their answer and the claim kept, want 20:\n%s", n, maxDeliveries, out.String())
	}
	if !strings.Contains(out.String(), "20 still unknown after 5 deliveries: dead-lettered, claim kept") ||
		!strings.Contains(out.String(), "failed for good, or (20) the email's fate stayed unknown: dead letter queue") ||
		!strings.Contains(out.String(), "(20 of the 20 jobs dead-lettered with the email's fate unknown got it)") {
		t.Errorf("the output does not say what happened:\n%s", out.String())
	}
}

// onTheMailServer puts the scenario on the calls to the mail server only.
type onTheMailServer struct{ s *faults.Scenario }

func (m onTheMailServer) Transport(base http.RoundTripper) http.RoundTripper {
	faulty := m.s.Transport(base)
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if strings.HasPrefix(req.URL.Path, "/messages") {
			return faulty.RoundTrip(req)
		}
		return base.RoundTrip(req)
	})
}
