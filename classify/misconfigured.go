package classify

import "strings"

// Messages of errors that net/http returns as plain strings, without a type
// to match: the text is all there is, so it is matched exactly as net/http
// writes it (go-retryablehttp and failsafe-go's failsafehttp match the same
// texts with regular expressions).
const (
	tlsHandshakeTimeout = "net/http: TLS handshake timeout"  // Transport.TLSHandshakeTimeout
	tooManyRedirects    = "stopped after 10 redirects"       // Client's default CheckRedirect
	noHost              = "http: no Host in request URL"     // Transport.RoundTrip
	nilURL              = "http: nil Request.URL"            // Client.Do, Transport.RoundTrip
	unsupportedScheme   = `unsupported protocol scheme "`    // + scheme + `"`
	invalidHeader       = `net/http: invalid header field `  // + `name "X"` or `value for "X"`
	invalidTrailer      = `net/http: invalid trailer field ` // the same for Request.Trailer
	invalidMethod       = `net/http: invalid method "`       // + method + `"`
)

// misconfiguredRule stops on failures that no later attempt can fix, because
// the request, the client or the server is misconfigured:
//
//   - a TLS certificate that fails verification: *tls.CertificateVerificationError
//     and the crypto/x509 errors (UnknownAuthorityError, CertificateInvalidError,
//     HostnameError, SystemRootsError, ConstraintViolationError,
//     UnhandledCriticalExtension, InsecureAlgorithmError);
//   - a request net/http refuses to send: an unsupported protocol scheme, an
//     invalid header or trailer field name or value, an invalid method, a URL
//     without a host ("invalid request");
//   - a redirect loop: net/http's "stopped after 10 redirects".
func (f *facts) misconfiguredRule() Decision {
	if f.certificate {
		return Decision{Verdict: Stop, Reason: ReasonCertificate}
	}
	if f.leaf == nil {
		return Decision{}
	}
	switch msg := f.leaf.Error(); {
	case msg == tooManyRedirects:
		return Decision{Verdict: Stop, Reason: ReasonTooManyRedirects}
	case msg == noHost || msg == nilURL ||
		strings.HasPrefix(msg, unsupportedScheme) || strings.HasPrefix(msg, invalidHeader) ||
		strings.HasPrefix(msg, invalidTrailer) || strings.HasPrefix(msg, invalidMethod):
		return Decision{Verdict: Stop, Reason: ReasonInvalidRequest}
	}
	return Decision{}
}

// leafIs reports whether the innermost error's text is msg.
func (f *facts) leafIs(msg string) bool { return f.leaf != nil && f.leaf.Error() == msg }
