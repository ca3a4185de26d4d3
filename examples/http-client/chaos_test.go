package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/chaos"
	"github.com/retrykit/retry/httpretry"
)

// inProcess serves requests with h in the process, without a socket, so
// that a synctest bubble can hold the whole exchange.
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, req)
	if req.Body != nil {
		req.Body.Close()
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// outcome is what one call returned, and when.
type outcome struct {
	status int
	err    error
	res    httpretry.Result
	took   time.Duration
}

// callWithin makes one call of the example's client with a deadline d away.
func callWithin(ctx context.Context, client *http.Client, method, url string, d time.Duration) outcome {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var o outcome
	ctx, _ = httpretry.WithResult(ctx, &o.res)
	req, _ := http.NewRequestWithContext(ctx, method, url, nil)
	if method == http.MethodPost {
		req.Header.Set("Idempotency-Key", url)
	}
	start := time.Now()
	resp, err := client.Do(req)
	o.took, o.err = time.Since(start), err
	if resp != nil {
		o.status = resp.StatusCode
		resp.Body.Close()
	}
	return o
}

// TestCallsStayWithinTheirDeadlineUnderA429Storm runs 40 calls at once of
// the example's client (4 attempts, exponential backoff) through a 10 s storm
// of 429s that ask for 1 s, with a heavy tail of latency on every request,
// each call with a 2.5 s deadline; then a 503 storm whose Retry-After is
// longer than any deadline; then the example's own flaky server. No call
// outlasts its deadline.
// Time is fake: the storms take no real time.
func TestCallsStayWithinTheirDeadlineUnderA429Storm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		s, err := chaos.New(chaos.Config{Seed: 26, Rules: []chaos.Rule{
			{Fault: chaos.LatencyTail(20*time.Millisecond, 300*time.Millisecond)},
			{Fault: chaos.Throttle(http.StatusTooManyRequests, time.Second), For: 10 * time.Second},
			{Fault: chaos.Throttle(http.StatusServiceUnavailable, time.Minute), Start: 20 * time.Second, For: 10 * time.Second},
		}})
		if err != nil {
			t.Fatal(err)
		}
		client, _, err := newClient(s.Transport(inProcess{&flaky{hits: map[string]int{}}}))
		if err != nil {
			t.Fatal(err)
		}
		const deadline = 2500 * time.Millisecond
		wave := func(name string) []outcome {
			out := make([]outcome, 40)
			var wg sync.WaitGroup
			for i := range out {
				method := http.MethodGet
				if i%2 == 1 {
					method = http.MethodPost // keyed: retried like a GET
				}
				url := fmt.Sprintf("http://api.example/%s/%d", name, i)
				wg.Go(func() { out[i] = callWithin(t.Context(), client, method, url, deadline) })
			}
			wg.Wait()
			for i, o := range out {
				if o.took > deadline {
					t.Errorf("%s call %d took %v, past its %v deadline", name, i, o.took, deadline)
				}
				if o.res.Attempts < 1 || o.res.Attempts > 4 {
					t.Errorf("%s call %d: %d attempts, want 1 to 4", name, i, o.res.Attempts)
				}
			}
			return out
		}

		for i, o := range wave("storm") {
			if o.status != http.StatusTooManyRequests {
				t.Errorf("storm call %d: status %d, err %v; want the last 429", i, o.status, o.err)
			}
			// Each 429 asks for a second: at most 3 attempts fit in 2.5 s,
			// and the loop stops before a wait that would outlast the
			// deadline (or when the retry budget runs dry).
			if o.res.Attempts > 3 || !(errors.Is(o.res.Err, retry.ErrDeadline) || errors.Is(o.res.Err, retry.ErrBudget)) {
				t.Errorf("storm call %d: %d attempts, stopped by %v", i, o.res.Attempts, o.res.Err)
			}
		}
		if st := s.Stats(); st.Processed != 0 {
			t.Errorf("the server processed %d requests during the storm", st.Processed)
		}

		time.Sleep(20*time.Second - time.Since(start))
		for i, o := range wave("long") {
			if o.status != http.StatusServiceUnavailable || o.res.Attempts != 1 || o.took >= time.Second {
				t.Errorf("long call %d: status %d after %d attempts in %v; want the 503 at once: its minute cannot be waited", i, o.status, o.res.Attempts, o.took)
			}
		}

		// After the storms the server answers — with its own 503 and 502
		// first. The Retrier's retry budget, drained by the storm, refills
		// only with first attempts that succeed, so these calls may stop
		// with the server's answer instead of retrying it: still within
		// their deadline.
		time.Sleep(30*time.Second - time.Since(start))
		for i, o := range wave("calm") {
			if o.status != http.StatusOK && o.status != http.StatusServiceUnavailable && o.status != http.StatusBadGateway {
				t.Errorf("calm call %d: status %d, err %v; want the server's own answer", i, o.status, o.err)
			}
		}
		if st := s.Stats(); st.Processed < 40 {
			t.Errorf("the server processed %d requests, want at least the calm wave's 40", st.Processed)
		}
	})
}
