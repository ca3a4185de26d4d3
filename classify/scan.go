package classify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/url"
	"syscall"
	"time"
)

type (
	statusCoder  interface{ HTTPStatusCode() int }
	retryAfterer interface{ RetryAfter() time.Duration }
	timeouter    interface{ Timeout() bool }
	retrier      interface{ Final() bool }
	iser         interface{ Is(error) bool }
)

// facts is what one walk of an error tree found, for the rules to decide on.
// Default walks the tree once, however many rules it applies.
type facts struct {
	spendCap, upstream, canceled, timeout, retried bool
	unexpectedEOF, eof, urlError                   bool
	deadline, dialTimeout, certificate             bool
	marker                                         *marked
	said                                           *said
	status                                         statusCoder
	retryAfter                                     retryAfterer
	sqlState                                       sqlStater
	errno                                          syscall.Errno
	dns                                            *net.DNSError
	leaf                                           error // the first error that wraps nothing
}

// scan walks err's tree depth first, through Unwrap() error and
// Unwrap() []error, as errors.Is and errors.As do, without reflection. The
// first (outermost) marker, status, SQLSTATE and Retry-After found are kept, and the
// first leaf, whose text the rules read only when no typed fact decided.
func scan(err error) facts {
	var f facts
	f.walk(err)
	return f
}

func (f *facts) walk(err error) {
	for err != nil {
		f.note(err)
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				f.walk(e)
			}
			return
		default:
			if f.leaf == nil {
				f.leaf = err
			}
			return
		}
	}
}

func (f *facts) note(err error) {
	switch err {
	case ErrSpendCap:
		f.spendCap = true
	case ErrUpstream:
		f.upstream = true
	case context.Canceled:
		f.canceled = true
	case context.DeadlineExceeded:
		f.deadline = true
	case io.ErrUnexpectedEOF:
		f.unexpectedEOF = true
	case io.EOF:
		f.eof = true
	}
	switch e := err.(type) {
	case *marked:
		if f.marker == nil {
			f.marker = e
		}
	case *said:
		if f.said == nil {
			f.said = e
		}
	case *url.Error:
		f.urlError = true
	case *net.OpError:
		// A dial that timed out never connected: nothing was sent.
		f.dialTimeout = f.dialTimeout || (e.Op == "dial" && e.Timeout())
	case *tls.CertificateVerificationError, x509.UnknownAuthorityError, x509.CertificateInvalidError,
		x509.HostnameError, x509.SystemRootsError, x509.ConstraintViolationError,
		x509.UnhandledCriticalExtension, x509.InsecureAlgorithmError:
		f.certificate = true
	case *net.DNSError:
		if f.dns == nil {
			f.dns = e
		}
	case syscall.Errno:
		if f.errno == 0 {
			f.errno = e
		}
	}
	f.noteInterfaces(err)
}

func (f *facts) noteInterfaces(err error) {
	if s, ok := err.(statusCoder); ok && f.status == nil {
		f.status = s
	}
	if s, ok := err.(sqlStater); ok && f.sqlState == nil {
		f.sqlState = s
	}
	if r, ok := err.(retryAfterer); ok && f.retryAfter == nil {
		f.retryAfter = r
	}
	if t, ok := err.(timeouter); ok && t.Timeout() {
		f.timeout = true
	}
	if r, ok := err.(retrier); ok && r.Final() {
		f.retried = true
	}
	if i, ok := err.(iser); ok {
		f.spendCap = f.spendCap || i.Is(ErrSpendCap)
		f.upstream = f.upstream || i.Is(ErrUpstream)
	}
}
