package pgtest

import (
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain stops the shared server after the tests and fails the package
// if a test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(Main(m)) }

func TestDBGivesEachTestItsOwnDatabase(t *testing.T) {
	start := time.Now()
	a := DB(t)
	b := DB(t)
	t.Logf("server and two databases in %v", time.Since(start))
	if a == b {
		t.Fatalf("two calls returned the same database %s", a)
	}
	if !strings.HasPrefix(a, "postgres://postgres@127.0.0.1:") {
		t.Errorf("URL %s is not a loopback postgres URL", a)
	}
	srv := Shared(t)
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(srv.Host, itoa(srv.Port)), time.Second)
	if err != nil {
		t.Fatalf("the server does not accept connections: %v", err)
	}
	conn.Close()
}

func TestLaunchAndStop(t *testing.T) {
	bin, err := Binaries()
	if err != nil {
		t.Skip(err)
	}
	s, err := Launch(bin)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(s.Host, itoa(s.Port))
	s.Stop()
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after Stop", addr)
	}
}
