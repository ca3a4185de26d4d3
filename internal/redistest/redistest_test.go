package redistest_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retry/internal/redistest"
)

func TestStartServesRedisAndRestarts(t *testing.T) {
	s := redistest.Start(t)
	set(t, s.Addr, "SET k v\r\n", "+OK")
	set(t, s.Addr, "GET k\r\n", "$1")
	s.Restart(t)
	set(t, s.Addr, "GET k\r\n", "$-1") // empty after a restart: persistence is off
}

func TestAOFKeepsWritesAcrossACrash(t *testing.T) {
	s := redistest.Start(t, redistest.AOF("always")...)
	set(t, s.Addr, "SET k v\r\n", "+OK")
	s.Stop() // SIGKILL
	s.Restart(t)
	set(t, s.Addr, "GET k\r\n", "$1")
}

func TestPauseHangsTheServerUntilResume(t *testing.T) {
	s := redistest.Start(t)
	s.Pause()
	conn, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		t.Fatalf("a paused server still accepts connections (the kernel does): %v", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	_ = conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if line, err := r.ReadString('\n'); err == nil {
		t.Fatalf("a paused server answered %q", line)
	}
	s.Resume()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+PONG") {
		t.Fatalf("after Resume: %q, %v; want the PONG it was sent for", line, err)
	}
}

func set(t *testing.T, addr, cmd, want string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(cmd)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(line, want) {
		t.Fatalf("%q: got %q, want %q", cmd, line, want)
	}
}
