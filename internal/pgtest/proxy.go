package pgtest

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy forwards connections to a PostgreSQL server and can lose the answer
// to a COMMIT: armed with LoseCommitReply, it passes the next COMMIT to the
// server, waits for the server's reply, throws it away and closes the
// connection. The server committed; the client cannot know it — the
// ambiguous commit, made deterministic.
type Proxy struct {
	Addr   string // the proxy's "127.0.0.1:port"
	target string
	ln     net.Listener
	armed  atomic.Bool
	lost   atomic.Int32
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

// NewProxy starts a proxy to the server at target (host:port), closed when
// t ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln}
	p.wg.Go(p.accept)
	t.Cleanup(p.Close)
	return p
}

// LoseCommitReply arms the proxy: the reply to the next COMMIT, on any
// connection, is lost with its connection.
func (p *Proxy) LoseCommitReply() { p.armed.Store(true) }

// Lost returns how many COMMIT replies the proxy lost.
func (p *Proxy) Lost() int { return int(p.lost.Load()) }

// Close stops accepting, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		closed := p.closed
		p.mu.Unlock()
		if closed {
			client.Close()
			server.Close()
			return
		}
		var committing atomic.Bool
		p.wg.Go(func() { p.fromClient(client, server, &committing) })
		p.wg.Go(func() { p.fromServer(server, client, &committing) })
	}
}

// fromClient forwards the client's messages one by one, noticing a COMMIT
// (pgx sends it as a simple query) while the proxy is armed.
func (p *Proxy) fromClient(client, server net.Conn, committing *atomic.Bool) {
	defer server.Close()
	startup := true // the first message has a length but no type byte
	for {
		msg, err := readMessage(client, startup)
		if err != nil {
			return
		}
		if !startup && isCommit(msg) && p.armed.CompareAndSwap(true, false) {
			committing.Store(true)
		}
		startup = false
		if _, err := server.Write(msg); err != nil {
			return
		}
	}
}

// fromServer forwards the server's bytes, except the reply to an armed
// COMMIT, which it drops with both connections.
func (p *Proxy) fromServer(server, client net.Conn, committing *atomic.Bool) {
	defer client.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 && committing.Load() {
			p.lost.Add(1)
			server.Close()
			return
		}
		if n > 0 {
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// readMessage reads one protocol message: a type byte (except the startup
// message), a 4-byte length that counts itself, the body.
func readMessage(r io.Reader, startup bool) ([]byte, error) {
	head := 5
	if startup {
		head = 4
	}
	msg := make([]byte, head)
	if _, err := io.ReadFull(r, msg); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(msg[head-4:])) - 4
	if n < 0 || n > 1<<30 {
		return nil, io.ErrUnexpectedEOF
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return append(msg, body...), nil
}

// isCommit is true for a simple query "commit" (any case).
func isCommit(msg []byte) bool {
	return msg[0] == 'Q' && bytes.EqualFold(bytes.TrimRight(msg[5:], "\x00; "), []byte("commit"))
}
