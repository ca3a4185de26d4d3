package pgtest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"testing"

	"github.com/retrykit/retry/internal/faultproxy"
)

// Proxy is a fault proxy (package faultproxy) between a client and a
// PostgreSQL server that reads the protocol's messages, so that it can lose
// the answer to a COMMIT: armed with LoseCommitReply, it passes the next
// COMMIT to the server, waits for the server's reply, throws it away and
// closes the connection. The server committed; the client cannot know it —
// the ambiguous commit, made deterministic. Every other fault of the
// embedded faultproxy.Proxy (latency, black hole, reset, refusal) is
// available through Set.
type Proxy struct {
	Addr string // the proxy's "127.0.0.1:port"
	*faultproxy.Proxy
}

// NewProxy starts a proxy to the server at target (host:port), closed when
// t ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	p := faultproxy.Start(t, target, faultproxy.Config{Requests: messages})
	return &Proxy{Addr: p.Addr(), Proxy: p}
}

// LoseCommitReply arms the proxy: the reply to the next COMMIT, on any
// connection, is lost with its connection.
func (p *Proxy) LoseCommitReply() { p.DropReply(isCommit) }

// Lost returns how many COMMIT replies the proxy lost.
func (p *Proxy) Lost() int { return p.Dropped() }

// messages returns a split function that cuts a connection's client bytes
// into protocol messages: a type byte (except the startup message, and the
// SSL or GSS encryption requests that may come before it), a 4-byte length
// that counts itself, the body.
func messages() bufio.SplitFunc {
	startup := true
	return func(data []byte, atEOF bool) (int, []byte, error) {
		head := 5
		if startup {
			head = 4
		}
		if len(data) < head {
			return 0, nil, short(data, atEOF)
		}
		n := head - 4 + int(binary.BigEndian.Uint32(data[head-4:head]))
		if n < head || n > 1<<30 {
			return 0, nil, io.ErrUnexpectedEOF
		}
		if len(data) < n {
			return 0, nil, short(data, atEOF)
		}
		startup = startup && isEncryptionRequest(data[:n])
		return n, data[:n], nil
	}
}

// isEncryptionRequest is true for an untyped SSLRequest or GSSENCRequest,
// which a startup message follows.
func isEncryptionRequest(msg []byte) bool {
	if len(msg) != 8 {
		return false
	}
	code := binary.BigEndian.Uint32(msg[4:])
	return code == 80877103 || code == 80877104
}

// short is the split function's error for an incomplete message: none
// (read more) unless the stream ended inside it.
func short(data []byte, atEOF bool) error {
	if atEOF && len(data) > 0 {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// isCommit is true for a simple query "commit" (any case).
func isCommit(msg []byte) bool {
	return len(msg) > 5 && msg[0] == 'Q' && bytes.EqualFold(bytes.TrimRight(msg[5:], "\x00; "), []byte("commit"))
}
