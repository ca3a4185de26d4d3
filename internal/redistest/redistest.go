// Package redistest starts a real redis-server for tests, on a free loopback
// port, with persistence off and a fresh working directory. It speaks to the
// server over plain TCP, so it needs no Redis client library.
//
// Without the redis-server binary on PATH a test that needs one is skipped
// with a message; with RETRY_REQUIRE_REDIS=1 (set by .ci/run, which installs
// redis-server) it fails instead, so that CI can never pass by skipping.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns a missing redis-server
// into a test failure.
const RequireEnv = "RETRY_REQUIRE_REDIS"

// Server is a running redis-server.
type Server struct {
	Addr string // "127.0.0.1:port"
	cmd  *exec.Cmd
}

// Start starts a redis-server for t and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("redis-server not found on PATH and %s=1: %v", RequireEnv, err)
		}
		t.Skipf("redis-server not found on PATH (install it, e.g. apt-get install redis-server; %s=1 makes this a failure): %v", RequireEnv, err)
	}
	s, err := launch(bin, t.TempDir())
	if err != nil {
		t.Fatalf("redis-server did not start: %v", err)
	}
	t.Cleanup(s.stop)
	return s
}

// Launch starts a redis-server outside a test — for a program that needs a
// Redis of its own, as examples/worker does — with its files in dir. The
// caller stops it with Stop.
func Launch(dir string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	return launch(bin, dir)
}

func launch(bin, dir string) (*Server, error) {
	var lastErr error
	for range 3 { // a free port can be taken between choosing it and binding it
		s, err := startIn(bin, dir)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func startIn(bin, dir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", dir+"/redis.log")
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
	if err := s.waitReady(10 * time.Second); err != nil {
		s.stop()
		log, _ := os.ReadFile(dir + "/redis.log")
		return nil, fmt.Errorf("%w; log:\n%s", err, log)
	}
	return s, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls the server with PING until it answers PONG.
func (s *Server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		err := s.ping()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no PONG from %s within %v: %w", s.Addr, limit, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *Server) ping() error {
	conn, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("unexpected reply %q", line)
	}
	return nil
}

// Stop kills the server: a test of what a client does while its Redis is
// unreachable. Restart brings it back.
func (s *Server) Stop() { s.stop() }

func (s *Server) stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// Restart kills the server and starts it again on the same port, empty: a
// test of what a client does when its Redis goes away and comes back.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.stop()
	_, port, _ := net.SplitHostPort(s.Addr)
	dir := t.TempDir()
	cmd := exec.Command(s.cmd.Path, "--port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", dir+"/redis.log")
	if err := cmd.Start(); err != nil {
		t.Fatalf("restart redis-server: %v", err)
	}
	s.cmd = cmd
	if err := s.waitReady(10 * time.Second); err != nil {
		t.Fatalf("restart redis-server: %v", err)
	}
}
