package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/chaos"
	"github.com/retrykit/retry/httpretry"
)

// A payment service under test: "503, 503, then 200", and a retry
// configuration that must get through it.
func Example() {
	s, err := chaos.New(chaos.Config{Rules: []chaos.Rule{
		{Script: []chaos.Fault{chaos.Throttle(503, 0), chaos.Throttle(503, 0)}},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	charges := 0
	charge := chaos.Wrap(s, func(context.Context) error { charges++; return nil })

	r, err := retry.New(retry.WithBackoff(backoff.Constant(time.Millisecond)))
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := r.Run(context.Background(), charge)
	fmt.Println(err, st.Attempts, charges)
	fmt.Printf("%+v\n", s.Stats())
	// Output:
	// <nil> 3 1
	// {Calls:3 Faults:2 Processed:1 Lost:0}
}

// Resets after the request was sent, at a rate of 30 %, against a server that
// charges each Idempotency-Key once: the retrying client may send a charge
// again, but the customer pays once.
func ExampleScenario_Transport() {
	var mu sync.Mutex
	charged := map[string]bool{}
	charges := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if key := r.Header.Get("Idempotency-Key"); !charged[key] { // else: replay the first answer
			charged[key] = true
			charges++
		}
	}))
	defer srv.Close()

	s, err := chaos.New(chaos.Config{Seed: 4, Rules: []chaos.Rule{{Fault: chaos.ResetAfterSend(), Rate: 0.3}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, _ := retry.New(retry.WithMaxAttempts(10), retry.WithBackoff(backoff.Constant(time.Millisecond)))
	client, _ := httpretry.NewClient(r, httpretry.WithBase(s.Transport(nil)))
	defer client.CloseIdleConnections()
	for i := range 20 {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("10 EUR"))
		req.Header.Set("Idempotency-Key", fmt.Sprint("order-", i))
		resp, err := client.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
	}
	st := s.Stats()
	fmt.Println("orders:", len(charged), "charges:", charges, "requests processed:", st.Processed, "answers lost:", st.Lost)
	// Output: orders: 20 charges: 20 requests processed: 31 answers lost: 11
}

// A value of the test's choosing, then a timeout whose request was
// processed, then the real function.
func ExampleWrapValue() {
	s, _ := chaos.New(chaos.Config{Rules: []chaos.Rule{
		{Script: []chaos.Fault{chaos.Value("cached"), chaos.Timeout(time.Millisecond)}},
	}})
	lookup := chaos.WrapValue(s, func(context.Context) (string, error) { return "fresh", nil })
	for range 3 {
		v, err := lookup(context.Background())
		fmt.Printf("%q %v\n", v, err)
	}
	// Output:
	// "cached" <nil>
	// "" read tcp: i/o timeout
	// "fresh" <nil>
}

// Rules stack: every call waits its latency, then the first fault that
// applies decides its outcome. The schedule throttles the first hour.
func ExampleConfig() {
	s, _ := chaos.New(chaos.Config{Rules: []chaos.Rule{
		{Fault: chaos.Latency(time.Millisecond)},
		{Fault: chaos.Throttle(429, 10*time.Second), For: time.Hour},
	}})
	err := chaos.Wrap(s, func(context.Context) error { return nil })(context.Background())
	var status interface{ RetryAfter() time.Duration }
	fmt.Println(err, errors.As(err, &status), status.RetryAfter())
	// Output: http 429 Too Many Requests true 10s
}

// Switched off, a scenario lets every call through, for nothing.
func ExampleScenario_Enable() {
	s, _ := chaos.New(chaos.Config{Rules: []chaos.Rule{{Fault: chaos.Truncate(2)}}})
	rt := s.Transport(nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	for _, on := range []bool{true, false} {
		s.Enable(on)
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("enabled %v: %q %v\n", on, body, err)
	}
	rt.(interface{ CloseIdleConnections() }).CloseIdleConnections()
	// Output:
	// enabled true: "he" unexpected EOF
	// enabled false: "hello" <nil>
}

// Each fault describes itself as the call that makes it.
func ExampleFault_String() {
	for _, f := range []chaos.Fault{chaos.ResetAfterSend(), chaos.Throttle(503, 2*time.Second), chaos.LatencyTail(20*time.Millisecond, time.Second), {}} {
		fmt.Println(f)
	}
	// Output:
	// ResetAfterSend()
	// Throttle(503, 2s)
	// LatencyTail(20ms, 1s)
	// Fault{}
}
