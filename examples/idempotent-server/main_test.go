package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retry/idempotency"
)

// start runs the server on a free port and returns its base URL; the server
// stops, and run must return nil, when the test ends.
func start(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"-addr", "127.0.0.1:0"}, pw)
		pw.Close()
		done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no address printed: %v", err)
	}
	go io.Copy(io.Discard, pr)
	m := regexp.MustCompile(`^listening on (http://127\.0\.0\.1:\d+)\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("first line %q; want the address", line)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run returned %v after shutdown; want nil", err)
		}
	})
	return m[1]
}

type reply struct {
	status int
	header http.Header
	body   string
}

func send(t *testing.T, method, url, key, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set(idempotency.HeaderKey, key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}
}

func executions(t *testing.T, base string) int {
	t.Helper()
	var stats struct {
		Executions int `json:"executions"`
	}
	r := send(t, "GET", base+"/stats", "", "")
	if err := json.Unmarshal([]byte(r.body), &stats); err != nil || r.status != 200 {
		t.Fatalf("GET /stats = %d %q", r.status, r.body)
	}
	return stats.Executions
}

func kind(t *testing.T, r reply) string {
	t.Helper()
	var p struct {
		Kind string `json:"kind"`
	}
	if r.header.Get("Content-Type") != "application/problem+json" || json.Unmarshal([]byte(r.body), &p) != nil {
		t.Fatalf("%d %q is not problem details", r.status, r.body)
	}
	return p.Kind
}

func TestIdempotentServer(t *testing.T) {
	base := start(t)
	orders := base + "/orders"

	if got := executions(t, base); got != 0 {
		t.Fatalf("executions at start = %d", got)
	}
	if r := send(t, "POST", orders, "", `{"item":"book"}`); r.status != 400 || kind(t, r) != idempotency.KindKeyMissing {
		t.Errorf("a POST without a key = %d %q; want 400 %s", r.status, r.body, idempotency.KindKeyMissing)
	}

	first := send(t, "POST", orders, "order-1", `{"item":"book"}`)
	if first.status != 201 || !strings.Contains(first.body, `"order":1`) {
		t.Fatalf("the first POST = %d %q; want 201 and order 1", first.status, first.body)
	}
	again := send(t, "POST", orders, "order-1", `{"item":"book"}`)
	if again.status != 201 || again.body != first.body || again.header.Get(idempotency.HeaderReplay) != "true" {
		t.Errorf("the repeat = %d %q %v; want the first response replayed", again.status, again.body, again.header)
	}
	if r := send(t, "POST", orders, "order-1", `{"item":"pen"}`); r.status != 422 || kind(t, r) != idempotency.KindKeyReuse {
		t.Errorf("the key with another body = %d %q; want 422", r.status, r.body)
	}

	inFlight := make(chan reply)
	go func() {
		req, _ := http.NewRequest("POST", orders+"?delay=500ms", strings.NewReader(`{}`))
		req.Header.Set(idempotency.HeaderKey, "order-2")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			inFlight <- reply{}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		inFlight <- reply{resp.StatusCode, resp.Header, string(b)}
	}()
	// The order is counted when it is placed, before the delay: once the
	// count moves, the request is in flight.
	deadline := time.Now().Add(5 * time.Second)
	for executions(t, base) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if r := send(t, "POST", orders+"?delay=500ms", "order-2", `{}`); r.status != 409 || kind(t, r) != idempotency.KindInProgress || r.header.Get("Retry-After") == "" {
		t.Errorf("a POST while the first with its key is in flight = %d %q; want 409 with Retry-After", r.status, r.body)
	}
	if r := <-inFlight; r.status != 201 {
		t.Errorf("the delayed POST = %d %q; want 201", r.status, r.body)
	}
	if got := executions(t, base); got != 2 {
		t.Errorf("executions = %d; want 2: one per key, however many repeats", got)
	}
	if r := send(t, "POST", orders+"?delay=forever", "order-3", `{}`); r.status != 400 {
		t.Errorf("a bad delay = %d; want 400", r.status)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), []string{"-addr"}, &out); err == nil {
		t.Error("run with -addr and no value = nil; want an error")
	}
	if err := run(context.Background(), []string{"-addr", "256.0.0.1:0"}, &out); err == nil {
		t.Error("run with an address it cannot listen on = nil; want an error")
	}
}
