package faultproxy

import (
	"bufio"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// link is one client connection and the proxy's connection to the server
// for it.
type link struct {
	client, server net.Conn
	dropping       atomic.Bool // the server's next bytes answer an armed DropReply
	once           sync.Once
	done           chan struct{} // closed by close
}

// close closes both connections, with a reset (RST) if asked.
func (l *link) close(rst bool) {
	l.once.Do(func() {
		if rst {
			reset(l.client)
			reset(l.server)
		} else {
			l.client.Close()
			l.server.Close()
		}
		close(l.done)
	})
}

// reset closes c with an RST instead of a FIN.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// replyCount counts the bytes of the server's answer forwarded since the
// Set of generation gen, for Faults.Reset.
type replyCount struct {
	gen uint64
	n   int
}

// fromClient forwards the client's requests to the server, arming a
// connection whose request DropReply matches.
func (p *Proxy) fromClient(l *link) {
	defer l.close(false)
	next := p.reader(l.client)
	for {
		req, ok := next()
		if !ok {
			p.closeLater(l)
			return
		}
		if m := p.drop.Load(); m != nil && (*m)(req) && p.drop.CompareAndSwap(m, nil) {
			l.dropping.Store(true)
		}
		if !p.pass(l, l.server, req, nil) {
			return
		}
	}
}

// fromServer forwards the server's answers to the client, except one that
// DropReply asked to lose.
func (p *Proxy) fromServer(l *link) {
	defer p.forget(l)
	defer l.close(false)
	buf := make([]byte, 32<<10)
	var rc replyCount
	for {
		n, err := l.server.Read(buf)
		if n > 0 && l.dropping.Load() {
			p.dropped.Add(1)
			return
		}
		if n > 0 && !p.pass(l, l.client, buf[:n], &rc) {
			return
		}
		if err != nil {
			p.closeLater(l)
			return
		}
	}
}

// reader returns a function that reads the next request of c: one chunk,
// or one message of the Config's framing. It returns false at the end.
func (p *Proxy) reader(c net.Conn) func() ([]byte, bool) {
	if p.cfg.Requests != nil {
		s := bufio.NewScanner(c)
		s.Buffer(make([]byte, 0, 32<<10), 1<<30)
		s.Split(p.cfg.Requests())
		return func() ([]byte, bool) {
			ok := s.Scan()
			return s.Bytes(), ok
		}
	}
	buf := make([]byte, 32<<10)
	return func() ([]byte, bool) {
		for {
			n, err := c.Read(buf)
			if n > 0 {
				return buf[:n], true
			}
			if err != nil {
				return nil, false
			}
		}
	}
}

// pass writes chunk to dst once the faults allow: after a black hole
// clears, after the latency; a reply counted by rc may instead reset the
// link. It returns false if the link is done.
func (p *Proxy) pass(l *link, dst net.Conn, chunk []byte, rc *replyCount) bool {
	f, gen, changed := p.state()
	for f.BlackHole {
		select {
		case <-changed:
		case <-l.done:
			return false
		case <-p.done:
			return false
		}
		f, gen, changed = p.state()
	}
	if f.Latency > 0 && !sleep(f.Latency, l.done, p.done) {
		return false
	}
	if rc != nil && f.Reset {
		if rc.gen != gen {
			*rc = replyCount{gen: gen}
		}
		if left := f.ResetAfter - rc.n; len(chunk) > left {
			dst.Write(chunk[:max(left, 0)])
			p.resets.Add(1)
			l.close(true)
			return false
		}
		rc.n += len(chunk)
	}
	_, err := dst.Write(chunk)
	return err == nil
}

// closeLater closes the link after the SlowClose delay: one side has
// closed, the other learns it late.
func (p *Proxy) closeLater(l *link) {
	if f, _, _ := p.state(); f.SlowClose > 0 {
		sleep(f.SlowClose, l.done, p.done)
	}
	l.close(false)
}

// sleep waits d, or until a or b is closed; it returns true if it waited d.
func sleep(d time.Duration, a, b <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-a:
	case <-b:
	}
	return false
}
