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
