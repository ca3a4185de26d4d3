package chaos_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/chaos"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/httpretry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawServer serves each connection with serve on a loopback port, and
// counts the requests it read whole.
type rawServer struct {
	ln   net.Listener
	read atomic.Int64
	done chan struct{}
}

func newRawServer(t *testing.T, serve func(s *rawServer, c *net.TCPConn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &rawServer{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			serve(s, c.(*net.TCPConn))
		}
	}()
	t.Cleanup(func() { ln.Close(); <-s.done })
	return s
}

func (s *rawServer) URL() string { return "http://" + s.ln.Addr().String() }

// readRequest reads one request whole, as a server that processes it does.
func (s *rawServer) readRequest(c net.Conn) bool {
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, req.Body)
	s.read.Add(1)
	return true
}

// resetAfterRead reads the request, then resets the connection (SO_LINGER
// 0 makes close send a RST): a real reset after the request was sent.
func resetAfterRead(s *rawServer, c *net.TCPConn) {
	s.readRequest(c)
	_ = c.SetLinger(0)
	_ = c.Close()
}

// truncating reads the request, then promises 100 bytes and sends 10.
func truncating(s *rawServer, c *net.TCPConn) {
	s.readRequest(c)
	_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
	_ = c.Close()
}

// healthy reads the request, then answers it with 100 bytes.
func healthy(s *rawServer, c *net.TCPConn) {
	if s.readRequest(c) {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n"+strings.Repeat("x", 100))
	}
	_ = c.Close()
}

func scenarioOf(t *testing.T, f chaos.Fault) *chaos.Scenario {
	return newScenario(t, chaos.Config{Rules: []chaos.Rule{{Fault: f}}})
}

// sameError asserts that the injected error is built as the real one: the
// same *net.OpError operation, the same syscall error, the same text (but
// for the local address) and the same decision of the default classifier.
func sameError(t *testing.T, real, injected error) {
	t.Helper()
	var r, i *net.OpError
	require.ErrorAs(t, real, &r, "%v", real)
	require.ErrorAs(t, injected, &i, "%v", injected)
	assert.Equal(t, r.Op, i.Op)
	assert.Equal(t, r.Net, i.Net)
	assert.Equal(t, r.Addr.String(), i.Addr.String())
	var re, ie syscall.Errno
	if errors.As(real, &re) || errors.As(injected, &ie) {
		errors.As(injected, &ie)
		assert.Equal(t, re, ie)
	}
	r.Source = nil // the client's port: the injected error has none
	assert.Equal(t, r.Error(), i.Error())
	assert.Equal(t, classify.Default(real), classify.Default(injected))
}

func TestAnInjectedResetAfterSendIsARealOne(t *testing.T) {
	real := newRawServer(t, resetAfterRead)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	_, realErr := tr.RoundTrip(post(t, real.URL()))
	require.Error(t, realErr)

	target := newRawServer(t, healthy)
	s := scenarioOf(t, chaos.ResetAfterSend())
	// The same host and port as the real one, for the texts to match.
	_, injected := s.Transport(redirectTo(tr, target)).RoundTrip(post(t, real.URL()))
	sameError(t, realErr, injected)
	assert.Equal(t, int64(1), real.read.Load(), "the real server read the request")
	assert.Equal(t, int64(1), target.read.Load(), "so did the injected one's")
	assert.Equal(t, chaos.Stats{Calls: 1, Faults: 1, Processed: 1, Lost: 1}, s.Stats())
}

func TestAnInjectedRefusalIsARealOne(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	_, realErr := tr.RoundTrip(post(t, url))

	s := scenarioOf(t, chaos.Refused())
	req := post(t, url)
	_, injected := s.Transport(tr).RoundTrip(req)
	sameError(t, realErr, injected)
	assert.Equal(t, chaos.Stats{Calls: 1, Faults: 1}, s.Stats(), "nothing was processed")
}

func TestAnInjectedTruncationIsARealOne(t *testing.T) {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	read := func(rt http.RoundTripper, url string) (string, error) {
		resp, err := rt.RoundTrip(get(t, url))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	realBody, realErr := read(tr, newRawServer(t, truncating).URL())
	s := scenarioOf(t, chaos.Truncate(10))
	body, err := read(s.Transport(tr), newRawServer(t, healthy).URL())
	assert.Equal(t, "0123456789", realBody)
	assert.Equal(t, strings.Repeat("x", 10), body, "cut at the same byte")
	assert.Equal(t, realErr, err)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, chaos.Stats{Calls: 1, Faults: 1, Processed: 1, Lost: 1}, s.Stats())
}

// TestHTTPRetryTreatsInjectedResetsAsRealOnes runs the same requests
// through httpretry against a server that really resets every connection
// after reading the request, and against a healthy server under
// ResetAfterSend: the attempts, the outcome and the requests the server
// processed are the same.
func TestHTTPRetryTreatsInjectedResetsAsRealOnes(t *testing.T) {
	r, err := retry.New(retry.WithMaxAttempts(3), retry.WithBackoff(backoff.Constant(time.Millisecond)))
	require.NoError(t, err)
	for _, tt := range []struct {
		name     string
		key      string
		method   string
		attempts int
	}{
		{"a GET is retried", "", http.MethodGet, 3},
		{"a POST without a key is sent once", "", http.MethodPost, 1},
		{"a POST with a key is retried", "order-1", http.MethodPost, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			call := func(base http.RoundTripper, url string) (httpretry.Result, error) {
				client, err := httpretry.NewClient(r, httpretry.WithBase(base))
				require.NoError(t, err)
				var res httpretry.Result
				ctx, err := httpretry.WithResult(t.Context(), &res)
				require.NoError(t, err)
				req, err := http.NewRequestWithContext(ctx, tt.method, url, strings.NewReader("charge 10"))
				require.NoError(t, err)
				if tt.key != "" {
					req.Header.Set("Idempotency-Key", tt.key)
				}
				resp, err := client.Do(req)
				if resp != nil {
					resp.Body.Close()
				}
				return res, err
			}
			real := newRawServer(t, resetAfterRead)
			realRes, realErr := call(freshTransport(t), real.URL())
			target := newRawServer(t, healthy)
			s := scenarioOf(t, chaos.ResetAfterSend())
			res, err := call(s.Transport(redirectTo(freshTransport(t), target)), real.URL())

			assert.Equal(t, tt.attempts, realRes.Attempts)
			assert.Equal(t, realRes.Attempts, res.Attempts)
			assert.Equal(t, normal(realErr), normal(err))
			assert.Equal(t, classify.Default(realErr), classify.Default(err))
			assert.Equal(t, int64(tt.attempts), real.read.Load())
			assert.Equal(t, real.read.Load(), target.read.Load())
			assert.Equal(t, real.read.Load(), s.Stats().Processed)
		})
	}
}

// normal is err's text without what changes from run to run: the time
// taken, and the client's port (the injected error has no local address).
func normal(err error) string {
	s := regexp.MustCompile(` in [0-9.]+[µmn]?s:`).ReplaceAllString(err.Error(), " in D:")
	return regexp.MustCompile(`[0-9.]+:\d+->`).ReplaceAllString(s, "")
}

func freshTransport(t *testing.T) *http.Transport {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// redirectTo sends every request to target's address instead of its own,
// so that an injected error names the same address as a real one.
func redirectTo(tr *http.Transport, target *rawServer) *http.Transport {
	tr = tr.Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, target.ln.Addr().String())
	}
	return tr
}

func post(t testing.TB, url string) *http.Request {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader("charge 10"))
	require.NoError(t, err)
	return req
}
