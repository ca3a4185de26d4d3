package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/retrykit/retry/examples/internal/memnet"
	"github.com/retrykit/retry/idempotency"
)

// TestMain fails the package if a goroutine outlives its tests: a server, a
// client's connections, a request in flight.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// step is one command of the README's walk-through and what it printed.
type step struct {
	command, output string
}

// walkthrough reads the console block under "## Walk-through" in README.md.
func walkthrough(t *testing.T) []step {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "## Walk-through\n")
	_, block, ok2 := strings.Cut(block, "```console\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no console block under ## Walk-through")
	}
	var steps []step
	for line := range strings.Lines(block) {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			steps = append(steps, step{command: strings.TrimSuffix(cmd, "\n")})
		} else if len(steps) > 0 {
			steps[len(steps)-1].output += line
		}
	}
	return steps
}

// curl is a curl command line of the walk-through, parsed: the few options
// it uses, and the shell's "> FILE &" around it.
type curl struct {
	method, url, body string
	header            http.Header
	include           bool   // -i: the status line and headers before the body
	background        string // "> FILE &": sent in the background, its output to FILE
}

// parseCommand parses a curl command line, or "wait; cat FILE" (file set).
func parseCommand(t *testing.T, line string) (c curl, file string) {
	t.Helper()
	if m := regexp.MustCompile(`^wait; cat (\S+)$`).FindStringSubmatch(line); m != nil {
		return c, m[1]
	}
	words := shellWords(t, line)
	if len(words) == 0 || words[0] != "curl" {
		t.Fatalf("walk-through command %q: want curl, or wait; cat FILE", line)
	}
	c.header = http.Header{}
	for i := 1; i < len(words); i++ {
		switch w := words[i]; {
		case w == "-s":
		case w == "-i" || w == "-si":
			c.include = true
		case w == "-X" || w == "-H" || w == "-d" || w == ">":
			if i++; i == len(words) {
				t.Fatalf("%q: %s needs a value", line, w)
			}
			c.set(w, words[i])
		case w == "&" && c.background != "":
		case !strings.HasPrefix(w, "-") && c.url == "":
			c.url = "http://" + w
		default:
			t.Fatalf("%q: the test does not know %q", line, w)
		}
	}
	return c, ""
}

func (c *curl) set(option, value string) {
	switch option {
	case "-X":
		c.method = value
	case "-H":
		name, v, _ := strings.Cut(value, ":")
		c.header.Add(name, strings.TrimSpace(v))
	case "-d": // as curl: a POST of a form, unless told otherwise
		c.body = value
		c.method = cmp.Or(c.method, http.MethodPost)
		c.header.Set("Content-Type", "application/x-www-form-urlencoded")
	case ">":
		c.background = value
	}
}

// shellWords splits a command line into words, as a shell does with single
// quotes (the only quoting the walk-through uses).
func shellWords(t *testing.T, line string) []string {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
			}
			inWord = false
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("%q: unterminated quote", line)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// do sends c and returns what curl would print, and the status.
func (c curl) do(client *http.Client) (string, int, error) {
	req, err := http.NewRequest(cmp.Or(c.method, http.MethodGet), c.url, strings.NewReader(c.body))
	if err != nil {
		return "", 0, err
	}
	req.Header = c.header
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if !c.include {
		return string(body), resp.StatusCode, err
	}
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s\n", resp.Proto, resp.Status)
	resp.Header.Write(&head)
	return strings.ReplaceAll(head.String(), "\r\n", "\n") + "\n" + string(body), resp.StatusCode, err
}

// normalized is an output as the README can show it: header lines sorted
// (their order on the wire is the server's business), the date and the
// execution id masked, no trailing newline.
func normalized(output string) string {
	head, body, found := strings.Cut(output, "\n\n")
	if !found || !strings.HasPrefix(head, "HTTP/") {
		return strings.TrimRight(output, "\n")
	}
	lines := strings.Split(head, "\n")
	slices.Sort(lines[1:])
	head = strings.Join(lines, "\n")
	head = regexp.MustCompile(`(?m)^(Date|Idempotent-Replay-Of): .*$`).ReplaceAllString(head, "$1: …")
	return head + "\n\n" + strings.TrimRight(body, "\n")
}

// TestWalkthrough runs the README's walk-through against the server's handler
// and checks that every command gets the answer shown. It runs in a
// synctest bubble over an in-memory network: the 5s hold of order 2 is fake
// time, and its repeat is sent once the first request is held in the
// handler — never after the hold, however slow the machine.
func TestWalkthrough(t *testing.T) {
	steps := walkthrough(t)
	synctest.Test(t, func(t *testing.T) {
		ln := memnet.Listen()
		tr := ln.Transport()
		client := &http.Client{Transport: tr}
		stop := startOn(t, ln)
		type answer struct {
			output string
			status int
			err    error
		}
		background := map[string]chan answer{}
		var statuses []int
		for _, s := range steps {
			c, file := parseCommand(t, s.command)
			var a answer
			switch {
			case c.background != "":
				done := make(chan answer, 1)
				background[c.background] = done
				go func() {
					var a answer
					a.output, a.status, a.err = c.do(client)
					done <- a
				}()
				synctest.Wait() // the request is in the handler, held: nothing else can move
				continue
			case file != "":
				a = <-background[file]
			default:
				a.output, a.status, a.err = c.do(client)
			}
			if a.err != nil {
				t.Fatalf("$ %s: %v", s.command, a.err)
			}
			statuses = append(statuses, a.status)
			if got, want := normalized(a.output), normalized(s.output); got != want {
				t.Errorf("$ %s\nprinted:\n%s\nthe README shows:\n%s", s.command, got, want)
			}
		}
		// The story the README tells, whatever its text: order 1 placed
		// and replayed, refused with another body and without a key; order 2's
		// repeat refused while it runs; two executions.
		if want := []int{201, 201, 422, 400, 409, 201, 200}; !slices.Equal(statuses, want) {
			t.Errorf("statuses %v, want %v", statuses, want)
		}
		tr.CloseIdleConnections()
		stop()
	})
}

// startOn serves the program's handler on ln, as run does on its socket;
// stop shuts it down and checks that serve returned nil.
func startOn(t *testing.T, ln *memnet.Listener) (stop func()) {
	t.Helper()
	handler, err := newHandler()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, &http.Server{Handler: handler}, ln) }()
	return func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve returned %v after shutdown; want nil", err)
		}
	}
}

// TestRunServesUntilCancelled runs the program as main does, on a free
// loopback port: it prints its address, serves, and returns nil once its
// context ends.
func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
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
	m := regexp.MustCompile(`^listening on http://(127\.0\.0\.1:\d+)\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("first line %q; want the address", line)
	}
	tr := &http.Transport{}
	client := &http.Client{Transport: tr}
	for _, c := range []struct {
		curl
		want int
	}{
		{curl{method: "POST", url: "/orders", header: http.Header{idempotency.HeaderKey: {"k"}}, body: "{}"}, 201},
		{curl{method: "POST", url: "/orders?delay=forever", header: http.Header{idempotency.HeaderKey: {"k2"}}}, 400},
		{curl{url: "/stats"}, 200},
	} {
		c.url = "http://" + m[1] + c.url
		out, status, err := c.do(client)
		if err != nil || status != c.want {
			t.Errorf("%s %s = %d %q, %v; want %d", c.method, c.url, status, out, err, c.want)
		}
	}
	tr.CloseIdleConnections()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v after its context ended; want nil", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("run still serving a minute after its context ended")
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

// TestAFloodingClientHoldsOneShare floods the server's public endpoint from
// one address, varying what it sends with every request as an attacker
// would, and checks that it gets one share of the store — 10,000 orders, a
// tenth — and 429 beyond, while every other client is served: anonymous,
// with cookies, with a token, over IPv6.
func TestAFloodingClientHoldsOneShare(t *testing.T) {
	const share, requests = 10_000, 11_000
	variants := []struct {
		name   string
		fields func(i int) []string
	}{
		{"nothing else", func(int) []string { return nil }},
		{"a junk cookie with each request", func(i int) []string { return []string{fmt.Sprintf("Cookie: junk=%d", i)} }},
		{"a junk Authorization with each request", func(i int) []string {
			return []string{fmt.Sprintf("Authorization: Bearer junk-%d", i)}
		}},
		{"a second Authorization with each request", func(i int) []string {
			return []string{"Authorization: Bearer mallory", fmt.Sprintf("Authorization: Bearer junk-%d", i)}
		}},
		{"a junk Proxy-Authorization with each request", func(i int) []string {
			return []string{fmt.Sprintf("Proxy-Authorization: Basic %d", i)}
		}},
	}
	others := map[string][]string{
		"an anonymous client":           {"Remote-Addr: 198.51.100.1:1000"},
		"a client with a cookie":        {"Remote-Addr: 198.51.100.2:1000", "Cookie: sid=dave"},
		"a client with a token":         {"Remote-Addr: 198.51.100.3:1000", "Authorization: Bearer carol"},
		"an anonymous client over IPv6": {"Remote-Addr: [2001:db8:1::1]:1000"},
		"a client in another /64":       {"Remote-Addr: [2001:db8:2::1]:1000"},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			handler, err := newHandler()
			if err != nil {
				t.Fatal(err)
			}
			codes := map[int]int{}
			for i := range requests {
				fields := append([]string{"Remote-Addr: 192.0.2.66:4444"}, v.fields(i)...)
				codes[order(handler, fmt.Sprint("flood-", i), fields)]++
			}
			if want := map[int]int{201: share, 429: requests - share}; !maps.Equal(codes, want) {
				t.Errorf("the flooding client got %v; want %v", codes, want)
			}
			for name, fields := range others {
				if code := order(handler, "order-1", fields); code != 201 {
					t.Errorf("%s got %d while one client flooded; want 201", name, code)
				}
			}
		})
	}
}

// order places an order with key through h, from the client the fields
// describe ("Remote-Addr: ip:port", or a header field), and returns the
// status.
func order(h http.Handler, key string, fields []string) int {
	req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(`{"item":"book"}`))
	req.Header.Set(idempotency.HeaderKey, key)
	for _, f := range fields {
		name, value, _ := strings.Cut(f, ": ")
		if name == "Remote-Addr" {
			req.RemoteAddr = value
		} else {
			req.Header.Add(name, value)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}
