package main

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

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
