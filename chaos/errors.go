package chaos

import (
	"net"
	"os"
	"syscall"
)

// The errors of connection faults are built as the standard library builds
// the real ones, so that every classifier — this module's, and any other
// that looks for syscall errors in a *net.OpError — sees no difference:
//
//	Refused          dial tcp host:port: connect: connection refused
//	ResetBeforeSend  write tcp host:port: write: connection reset by peer
//	ResetAfterSend   read tcp host:port: read: connection reset by peer
//	Timeout, Stall   read tcp host:port: i/o timeout
//
// (net/http returns them as they are: it unwraps its own wrappers before
// RoundTrip returns.) addr is the target's host:port, or "" for a function,
// which has none.
func connError(k kind, addr string) error {
	e := &net.OpError{Net: "tcp"}
	if addr != "" {
		e.Addr = hostPort(addr)
	}
	switch k {
	case refused:
		e.Op, e.Err = "dial", os.NewSyscallError("connect", syscall.ECONNREFUSED)
	case resetBefore:
		e.Op, e.Err = "write", os.NewSyscallError("write", syscall.ECONNRESET)
	case resetAfter:
		e.Op, e.Err = "read", os.NewSyscallError("read", syscall.ECONNRESET)
	default:
		e.Op, e.Err = "read", os.ErrDeadlineExceeded
	}
	return e
}

// hostPort is a net.Addr for a host:port that need not be resolved.
type hostPort string

func (hostPort) Network() string  { return "tcp" }
func (a hostPort) String() string { return string(a) }
