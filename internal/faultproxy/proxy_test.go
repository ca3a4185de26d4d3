package faultproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server is a real TCP server on loopback that runs handle for each
// connection; it stops when the test ends.
type server struct {
	addr     string
	requests atomic.Int64 // lines read by the line handlers
}

func serve(t *testing.T, handle func(s *server, c net.Conn)) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { defer c.Close(); handle(s, c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return s
}

// echo answers each line with the same line.
func echo(s *server, c net.Conn) {
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		s.requests.Add(1)
		if _, err := c.Write(line); err != nil {
			return
		}
	}
}

// bigReply answers each line with 1000 bytes.
func bigReply(s *server, c net.Conn) {
	r := bufio.NewReader(c)
	for {
		if _, err := r.ReadBytes('\n'); err != nil {
			return
		}
		s.requests.Add(1)
		if _, err := c.Write(bytes.Repeat([]byte("x"), 1000)); err != nil {
			return
		}
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends line and reads the echo, within timeout.
func roundTrip(c net.Conn, line string, timeout time.Duration) (string, error) {
	c.SetDeadline(time.Now().Add(timeout))
	defer c.SetDeadline(time.Time{})
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got := make([]byte, len(line)+1)
	if _, err := io.ReadFull(c, got); err != nil {
		return "", err
	}
	return string(got[:len(line)]), nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestZeroFaultsForwardEveryByteBothWays(t *testing.T) {
	p := Start(t, serve(t, echo).addr, Config{})
	c := dial(t, p.Addr())
	big := string(bytes.Repeat([]byte("0123456789"), 50_000)) // several chunks each way
	got, err := roundTrip(c, big, 5*time.Second)
	if err != nil || got != big {
		t.Fatalf("echo of %d bytes: got %d bytes, %v", len(big), len(got), err)
	}
}

func TestLatencyDelaysEveryChunkInEachDirection(t *testing.T) {
	p := Start(t, serve(t, echo).addr, Config{})
	c := dial(t, p.Addr())
	p.Set(Faults{Latency: 50 * time.Millisecond})
	start := time.Now()
	if _, err := roundTrip(c, "a", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(start); rtt < 100*time.Millisecond {
		t.Errorf("round trip took %v with 50ms latency each way, want at least 100ms", rtt)
	}
	p.Set(Faults{})
	start = time.Now()
	if _, err := roundTrip(c, "b", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("healed round trip: %v", time.Since(start))
}

func TestABlackHoleReadsButNeverAnswersUntilItCloses(t *testing.T) {
	s := serve(t, echo)
	p := Start(t, s.addr, Config{})
	old := dial(t, p.Addr())
	p.Set(Faults{BlackHole: true})
	if _, err := roundTrip(old, "held", 100*time.Millisecond); !isTimeout(err) {
		t.Fatalf("an established connection got %v from a black hole, want a timeout", err)
	}
	fresh := dial(t, p.Addr()) // accepted although nothing answers
	if _, err := roundTrip(fresh, "new", 100*time.Millisecond); !isTimeout(err) {
		t.Fatalf("a new connection got %v from a black hole, want a timeout", err)
	}
	if n := s.requests.Load(); n != 0 {
		t.Fatalf("the server saw %d requests through a black hole", n)
	}
	p.Set(Faults{})
	// What was held is passed on, as a resumed server answers what it was sent.
	for _, c := range []struct {
		conn net.Conn
		line string
	}{{old, "held"}, {fresh, "new"}} {
		got := make([]byte, len(c.line)+1)
		c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(c.conn, got); err != nil || string(got[:len(c.line)]) != c.line {
			t.Fatalf("after the hole closed: got %q, %v; want %q", got, err, c.line)
		}
	}
}

func TestResetCutsTheServersAnswerAfterResetAfterBytes(t *testing.T) {
	p := Start(t, serve(t, bigReply).addr, Config{})
	c := dial(t, p.Addr())
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "warm\n")
	if _, err := io.ReadFull(c, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	p.Set(Faults{Reset: true, ResetAfter: 100})
	io.WriteString(c, "cut\n")
	got, err := io.ReadAll(c)
	if len(got) != 100 || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read %d bytes then %v; want 100 bytes then a connection reset", len(got), err)
	}
	if p.Resets() != 1 {
		t.Errorf("Resets() = %d, want 1", p.Resets())
	}
}

func TestResetWithResetAfterZeroComesBeforeTheFirstByte(t *testing.T) {
	p := Start(t, serve(t, bigReply).addr, Config{})
	p.Set(Faults{Reset: true})
	c := dial(t, p.Addr())
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "cut\n")
	got, err := io.ReadAll(c)
	if len(got) != 0 || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read %d bytes then %v; want a reset before any byte", len(got), err)
	}
}

func TestSlowCloseDelaysTheServersCloseReachingTheClient(t *testing.T) {
	closer := func(s *server, c net.Conn) { c.Write([]byte("bye")) } // serve closes c on return
	p := Start(t, serve(t, closer).addr, Config{})
	p.Set(Faults{SlowClose: 150 * time.Millisecond})
	c := dial(t, p.Addr())
	c.SetDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	got, err := io.ReadAll(c)
	if string(got) != "bye" || err != nil {
		t.Fatalf("got %q, %v", got, err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("the close arrived after %v, want at least 150ms", d)
	}
}

func TestRefuseClosesThePortAndHealingOpensItAgain(t *testing.T) {
	p := Start(t, serve(t, echo).addr, Config{})
	old := dial(t, p.Addr())
	if _, err := roundTrip(old, "up", 5*time.Second); err != nil { // accepted by the proxy, not only by the kernel
		t.Fatal(err)
	}
	p.Set(Faults{Refuse: true})
	if c, err := net.DialTimeout("tcp", p.Addr(), time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial while refusing: %v, want connection refused", err)
	}
	if _, err := roundTrip(old, "still", 5*time.Second); err != nil {
		t.Fatalf("an established connection broke while refusing: %v", err)
	}
	p.Set(Faults{})
	if _, err := roundTrip(dial(t, p.Addr()), "again", 5*time.Second); err != nil {
		t.Fatalf("after healing: %v", err)
	}
}

func TestResetAllResetsEveryEstablishedConnection(t *testing.T) {
	p := Start(t, serve(t, echo).addr, Config{})
	a, b := dial(t, p.Addr()), dial(t, p.Addr())
	for _, c := range []net.Conn{a, b} {
		if _, err := roundTrip(c, "up", 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	p.ResetAll()
	for _, c := range []net.Conn{a, b} {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("read after ResetAll: %v, want a connection reset", err)
		}
	}
}

func TestDropReplyLosesTheMatchedRequestsReplyOnceAfterTheServerDidIt(t *testing.T) {
	s := serve(t, echo)
	p := Start(t, s.addr, Config{})
	c := dial(t, p.Addr())
	p.DropReply(func(req []byte) bool { return string(req) == "commit\n" })
	if got, err := roundTrip(c, "select", 5*time.Second); err != nil || got != "select" {
		t.Fatalf("a request that does not match: %q, %v", got, err)
	}
	if _, err := roundTrip(c, "commit", 5*time.Second); err == nil || isTimeout(err) {
		t.Fatalf("the matched request's reply: %v, want the connection closed", err)
	}
	if s.requests.Load() != 2 || p.Dropped() != 1 {
		t.Fatalf("the server saw %d requests and the proxy dropped %d replies; want 2 and 1", s.requests.Load(), p.Dropped())
	}
	if got, err := roundTrip(dial(t, p.Addr()), "commit", 5*time.Second); err != nil || got != "commit" {
		t.Fatalf("DropReply is armed once, but the second commit got %q, %v", got, err)
	}
}

func TestRequestsFramingShowsMatchWholeRequests(t *testing.T) {
	s := serve(t, echo)
	var seen []string
	var mu sync.Mutex
	p := Start(t, s.addr, Config{Requests: func() bufio.SplitFunc { return bufio.ScanLines }})
	p.DropReply(func(req []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, string(req))
		return false
	})
	c := dial(t, p.Addr())
	io.WriteString(c, "a\nb\n") // one write, two requests
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != "a" || seen[1] != "b" {
		t.Fatalf("match saw %q, want [a b]", seen)
	}
}

func TestSetIsSafeWhileTrafficFlows(t *testing.T) {
	p := Start(t, serve(t, echo).addr, Config{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			for range 50 {
				if _, err := roundTrip(c, "ping", 5*time.Second); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i := range 50 {
		p.Set(Faults{Latency: time.Duration(i%2) * time.Millisecond, BlackHole: i%3 == 0})
	}
	p.Set(Faults{})
	wg.Wait()
}

func TestCloseEndsHeldAndDelayedConnections(t *testing.T) {
	p := Start(t, serve(t, echo).addr, Config{})
	c := dial(t, p.Addr())
	p.Set(Faults{BlackHole: true})
	io.WriteString(c, "held\n")
	d := dial(t, p.Addr())
	p.Set(Faults{Latency: time.Hour})
	io.WriteString(d, "late\n")
	time.Sleep(10 * time.Millisecond)
	p.Close() // goleak checks that no goroutine is left waiting
	p.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Errorf("read after Close: %v, want the connection closed", err)
	}
}

func TestLogMeasuresOvershootAndRecovery(t *testing.T) {
	var l Log
	fail := errors.New("down")
	l.Do(t.Context(), time.Millisecond, func(ctx context.Context) error { <-ctx.Done(); time.Sleep(20 * time.Millisecond); return ctx.Err() })
	if d, _ := l.Overshoot(); d < 20*time.Millisecond {
		t.Errorf("Overshoot = %v, want at least 20ms", d)
	}
	if _, ok := l.Recovery(); ok {
		t.Error("Recovery without Healed")
	}
	l.Healed()
	l.Do(t.Context(), time.Second, func(context.Context) error { return fail })
	if _, ok := l.Recovery(); ok {
		t.Error("Recovery after a failure and no success")
	}
	l.Do(t.Context(), time.Second, func(context.Context) error { time.Sleep(5 * time.Millisecond); return nil })
	l.Do(t.Context(), time.Second, func(context.Context) error { return nil })
	d, ok := l.Recovery()
	if !ok || d < 5*time.Millisecond {
		t.Errorf("Recovery = %v, %v; want the end of the first success after the last failure, at least 5ms", d, ok)
	}
	if n := len(l.Calls()); n != 4 {
		t.Errorf("%d calls recorded, want 4", n)
	}
}
