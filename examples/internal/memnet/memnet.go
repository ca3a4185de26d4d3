// Package memnet is an in-memory network for the examples' tests: an
// http.Server serves on a Listener, and a Transport dials it, over net.Pipe.
// Nothing touches a socket, so a test can run the server and its clients
// inside a testing/synctest bubble — real sockets cannot be in one — where
// time is fake and the order of two timers is the order of their deadlines,
// however loaded the machine.
package memnet

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// Listener is a net.Listener whose connections come from its Dial. Make it
// with Listen; it is safe for concurrent use.
type Listener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

// Listen returns a Listener. In a test that uses synctest, call it inside
// the bubble: its channels belong to the bubble that made them.
func Listen() *Listener {
	return &Listener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept waits for the next Dial, and returns the server's end of its pipe.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and Dial; the connections already made stay open.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr returns the listener's address: "memnet", whatever was dialled.
func (l *Listener) Addr() net.Addr { return addr{} }

// DialContext connects to the listener, whatever network and address are
// asked for: it is an http.Transport's DialContext.
func (l *Listener) DialContext(ctx context.Context, _, _ string) (_ net.Conn, err error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		err = &net.OpError{Op: "dial", Net: "memnet", Err: net.ErrClosed}
	case <-ctx.Done():
		err = ctx.Err()
	}
	client.Close()
	server.Close()
	return nil, err
}

// Transport returns a new http.Transport that sends every request to l.
// Close its idle connections when done, as with any Transport.
func (l *Listener) Transport() *http.Transport {
	return &http.Transport{DialContext: l.DialContext}
}

type addr struct{}

func (addr) Network() string { return "memnet" }
func (addr) String() string  { return "memnet" }
