// Package redistest starts a real redis-server for tests, on a free loopback
// port, with persistence off and a fresh working directory. It speaks to the
// server over plain TCP, so it needs no Redis client library.
//
// Without the redis-server binary on PATH a test that needs one is skipped
// with a message; with RETRY_REQUIRE_REDIS=1 (set by .ci/run, which installs
// redis-server) it fails instead, so that CI can never pass by skipping.
//
// Faults are signals to the real process: Stop is a crash (SIGKILL), Pause
// hangs the server (SIGSTOP: the kernel still accepts connections and takes
// requests, nothing answers) until Resume, and Restart brings a crashed
// server back on the same port and data directory — empty, unless the server
// was started with persistence (AOF).
//
// StartCluster starts a Redis Cluster: six servers, made three primaries
// with a replica each by redis-cli --cluster create, with a cluster node
// timeout of NodeTimeout. It needs redis-cli too, and answers to
// RETRY_REQUIRE_REDIS_CLUSTER as Start does to RETRY_REQUIRE_REDIS. A test
// kills a primary with its Server's Stop and waits for its replica to take
// over (WaitFailover); Detach makes a replica fall behind first; Migrate
// moves a slot step by step; Redirects counts the MOVED and ASK replies the
// nodes sent. Slot and ScriptKeys let a go-redis hook check that a script's
// keys share one slot.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
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
	dir  string   // the working directory: the log, and the AOF if any
	args []string // the caller's arguments, given again on Restart
}

// AOF returns the redis-server arguments that turn on the append-only file
// with the given fsync policy ("always", "everysec" or "no"), for Start. With
// "always", Redis writes and fsyncs each command before it answers, so what
// a client was told is kept survives a SIGKILL of the server.
func AOF(fsync string) []string {
	return []string{"--appendonly", "yes", "--appendfsync", fsync}
}

// Start starts a redis-server for t and stops it when t ends. args are more
// redis-server arguments, after the defaults (no RDB snapshots, no AOF); a
// later argument wins, so Start(t, AOF("always")...) runs a durable server.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("redis-server not found on PATH and %s=1: %v", RequireEnv, err)
		}
		t.Skipf("redis-server not found on PATH (install it, e.g. apt-get install redis-server; %s=1 makes this a failure): %v", RequireEnv, err)
	}
	s, err := launch(bin, t.TempDir(), args, freePort)
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
	return launch(bin, dir, nil, freePort)
}

func launch(bin, dir string, args []string, pick func() (int, error)) (*Server, error) {
	var lastErr error
	for range 3 { // a free port can be taken between choosing it and binding it
		port, err := pick()
		if err != nil {
			return nil, err
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, args: args}
		if lastErr = s.start(bin); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// start runs redis-server on s.Addr in s.dir and waits for its PONG.
func (s *Server) start(bin string) error {
	_, port, _ := net.SplitHostPort(s.Addr)
	argv := append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--logfile", s.dir + "/redis.log"}, s.args...)
	s.cmd = exec.Command(bin, argv...)
	if err := s.cmd.Start(); err != nil {
		return err
	}
	if err := s.waitReady(10 * time.Second); err != nil {
		s.stop()
		log, _ := os.ReadFile(s.dir + "/redis.log")
		return fmt.Errorf("%w; log:\n%s", err, log)
	}
	return nil
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
	if err := poll(limit, 10*time.Millisecond, s.ping); err != nil {
		return fmt.Errorf("no PONG from %s within %v: %w", s.Addr, limit, err)
	}
	return nil
}

// poll calls f every interval until it returns nil, or for limit at most:
// then it returns f's last error.
func poll(limit, interval time.Duration, f func() error) error {
	deadline := time.Now().Add(limit)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(interval)
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

// Stop kills the server with SIGKILL, as a crash would: no shutdown, no last
// save. Its clients see refused connections until Restart.
func (s *Server) Stop() { s.stop() }

func (s *Server) stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill() // SIGKILL ends a paused process too
		_ = s.cmd.Wait()
	}
}

// Pause hangs the server with SIGSTOP: connections are still accepted by the
// kernel and requests are taken, but nothing answers until Resume — the
// fault a client's own timeouts must bound.
func (s *Server) Pause() { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT); it answers what it was sent.
func (s *Server) Resume() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }

// Restart kills the server and starts it again on the same port, with the
// same arguments and data directory: empty without persistence, as Redis
// comes back after a crash; with AOF, holding what its fsync policy kept.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.stop()
	if err := s.start(s.cmd.Path); err != nil {
		t.Fatalf("restart redis-server: %v", err)
	}
}
