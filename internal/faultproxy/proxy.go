package faultproxy

import (
	"bufio"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Faults is what the proxy does to the traffic it forwards. The zero value
// forwards everything unchanged.
type Faults struct {
	// Latency delays every chunk of bytes the proxy reads, in each
	// direction, by this long before passing it on. A chunk is what one read
	// returned (on loopback, usually one request or one reply), so a round
	// trip takes at least twice Latency.
	Latency time.Duration
	// BlackHole holds every chunk read, in both directions and on new
	// connections too, until a Set clears it: the server seems hung. The held
	// bytes are then passed on, as a stopped server that resumes answers what
	// it was sent — unless the connection was closed meanwhile.
	BlackHole bool
	// Reset resets each connection (RST to both sides) once ResetAfter more
	// bytes of the server's answer have been forwarded, counted from the Set
	// that asked for it, or from the connection's start if it is newer. With
	// ResetAfter 0 the reset comes instead of the next byte of the answer.
	Reset      bool
	ResetAfter int
	// SlowClose delays passing on a close: when one side closes its
	// connection, the other side's connection is closed this much later.
	SlowClose time.Duration
	// Refuse closes the proxy's port: new connections are refused, as when
	// the server is gone, while established ones carry on. Clearing it opens
	// the same port again.
	Refuse bool
}

// Config is how a proxy reads the client's bytes. The zero value reads raw
// chunks.
type Config struct {
	// Requests, if not nil, returns for each new connection a split function
	// that cuts the client's bytes into requests (a protocol's framing, as
	// for bufio.Scanner). Each request is then passed on alone and DropReply's
	// match sees whole requests. Nil: match sees what each read returned.
	Requests func() bufio.SplitFunc
}

// Proxy forwards the connections it accepts on a loopback port to a target
// server, doing to them what its Faults say. Its methods are safe for
// concurrent use.
type Proxy struct {
	t      testing.TB
	target string
	addr   string
	cfg    Config

	mu      sync.Mutex
	faults  Faults
	gen     uint64        // counts Sets: a Reset is counted from its own
	changed chan struct{} // closed and replaced at each Set
	ln      net.Listener  // nil while refusing
	links   map[*link]struct{}
	closed  bool
	done    chan struct{} // closed by Close

	drop    atomic.Pointer[func([]byte) bool]
	dropped atomic.Int64
	resets  atomic.Int64
	wg      sync.WaitGroup
}

// Start starts a proxy on a free loopback port to the server at target
// (host:port), closed when t ends. A failure to listen fails t.
func Start(t testing.TB, target string, cfg Config) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("faultproxy: %v", err)
	}
	p := &Proxy{
		t: t, target: target, addr: ln.Addr().String(), cfg: cfg, ln: ln,
		changed: make(chan struct{}), links: map[*link]struct{}{}, done: make(chan struct{}),
	}
	p.wg.Go(func() { p.accept(ln) })
	t.Cleanup(p.Close)
	return p
}

// Addr returns the proxy's address, "127.0.0.1:port": the address clients
// dial instead of the server's.
func (p *Proxy) Addr() string { return p.addr }

// Set replaces the proxy's faults; Set(Faults{}) heals. It takes effect on
// the next chunk each connection forwards; a chunk already waiting out a
// Latency is not hurried. If the port cannot be opened again after Refuse,
// Set fails the test (with Errorf: Set may be called from any goroutine).
func (p *Proxy) Set(f Faults) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	was := p.faults
	p.faults = f
	p.gen++
	close(p.changed)
	p.changed = make(chan struct{})
	switch {
	case f.Refuse && !was.Refuse:
		p.ln.Close()
		p.ln = nil
	case !f.Refuse && was.Refuse:
		ln, err := net.Listen("tcp", p.addr)
		if err != nil {
			p.t.Errorf("faultproxy: cannot open %s again: %v", p.addr, err)
			return
		}
		p.ln = ln
		p.wg.Go(func() { p.accept(ln) })
	}
}

// Faults returns the proxy's current faults.
func (p *Proxy) Faults() Faults {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.faults
}

// DropReply arms the proxy once: the first request for which match returns
// true, on any connection, is passed to the server; the server's reply to it
// is thrown away and its connection closed on both sides. match is called
// on the goroutine that reads the request, and must not keep it.
func (p *Proxy) DropReply(match func(request []byte) bool) { p.drop.Store(&match) }

// Dropped returns how many replies DropReply made the proxy lose.
func (p *Proxy) Dropped() int { return int(p.dropped.Load()) }

// Resets returns how many connections the Reset fault reset.
func (p *Proxy) Resets() int { return int(p.resets.Load()) }

// ResetAll resets every established connection now (RST to both sides), as
// when the server's process dies; with Refuse set first, nothing can
// reconnect until it is cleared.
func (p *Proxy) ResetAll() {
	p.mu.Lock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.close(true)
	}
}

// Close stops accepting, closes every connection and waits for the proxy's
// goroutines. Calling it more than once is safe.
func (p *Proxy) Close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.done)
		if p.ln != nil {
			p.ln.Close()
		}
	}
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.close(false)
	}
	p.wg.Wait()
}

// state returns the current faults, their generation and the channel the
// next Set closes.
func (p *Proxy) state() (Faults, uint64, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.faults, p.gen, p.changed
}

// accept serves one listener until it is closed (by Refuse or Close).
func (p *Proxy) accept(ln net.Listener) {
	for {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			reset(client)
			continue
		}
		l := &link{client: client, server: server, done: make(chan struct{})}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			l.close(false)
			return
		}
		p.links[l] = struct{}{}
		p.wg.Go(func() { p.fromClient(l) })
		p.wg.Go(func() { p.fromServer(l) })
		p.mu.Unlock()
	}
}

// forget removes a finished link.
func (p *Proxy) forget(l *link) {
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
}
