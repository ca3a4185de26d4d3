package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var servingAt = regexp.MustCompile(`serving the dashboard of .* at (http://\S+/)`)

// startServe runs dlq with args (which name the serve command) on a free
// loopback port, and returns the dashboard's URL.
// The server is interrupted, as Ctrl-C would, when the test ends, and must
// then exit 0.
func startServe(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append(args, "--addr", "127.0.0.1:0")...)
	cmd.Env = append(append(os.Environ(), "DLQ_DB=", "DLQ_REDIS=", "DLQ_TOKEN=", "GORACE=atexit_sleep_ms=0"), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		for range lines {
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("dlq serve, interrupted: %v", err)
		}
	})
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("dlq serve exited before serving")
			}
			if m := servingAt.FindStringSubmatch(line); m != nil {
				go func() {
					for range lines {
					}
				}()
				return m[1]
			}
		case <-timeout:
			t.Fatal("dlq serve did not say where it serves within 20s")
		}
	}
}

func fetch(t *testing.T, url string, basicPassword string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if basicPassword != "" {
		req.SetBasicAuth("me", basicPassword)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServeShowsTheQueue(t *testing.T) {
	db, ls := seededFile(t)
	url := startServe(t, nil, "--db", db, "serve")
	status, body := fetch(t, url, "")
	if status != http.StatusOK || !strings.Contains(body, `id="count">4<`) || !strings.Contains(body, ls["a"].Group()) {
		t.Fatalf("GET / = %d:\n%s", status, body)
	}
	if strings.Contains(body, `id="replay"`) {
		t.Fatal("a SQLite queue served without --exec offers replay")
	}
}

// A browser opens connections ahead of need; one that has sent no request
// holds http.Server.Shutdown for 5s. The interrupted server still exits 0
// (startServe's cleanup checks it).
func TestServeExitsCleanlyWithAConnectionThatSentNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the 5s shutdown grace")
	}
	db, _ := seededFile(t)
	var conn net.Conn
	t.Cleanup(func() { // runs after startServe's: the connection stays open through the interrupt
		if conn != nil {
			conn.Close()
		}
	})
	url := startServe(t, nil, "--db", db, "serve")
	var err error
	conn, err = net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
}

func TestServeRefusesAnyAddressButLoopbackWithoutAToken(t *testing.T) {
	db, _ := seededFile(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		r := dlqCmd(t, "--db", db, "serve", "--addr", addr).must(t, 2)
		if !strings.Contains(r.stderr, "not a loopback address") {
			t.Fatalf("serve --addr %s said %q", addr, r.stderr)
		}
	}
	empty := filepath.Join(t.TempDir(), "token")
	os.WriteFile(empty, []byte("\n"), 0o600)
	if r := dlqCmd(t, "--db", db, "serve", "--addr", "0.0.0.0:0", "--token-file", empty).must(t, 2); !strings.Contains(r.stderr, "is empty") {
		t.Fatalf("an empty token file: %q", r.stderr)
	}
}

func TestServeWithATokenAsksForIt(t *testing.T) {
	db, _ := seededFile(t)
	const token = "a-token-of-the-operator-0123"
	url := startServe(t, []string{"DLQ_TOKEN=" + token}, "--db", db, "serve")
	if status, _ := fetch(t, url, ""); status != http.StatusUnauthorized {
		t.Fatalf("no token: status %d, want 401", status)
	}
	if status, _ := fetch(t, url, token); status != http.StatusOK {
		t.Fatalf("the token: status %d, want 200", status)
	}
}
