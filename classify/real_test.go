package classify_test

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNetHTTPErrorsThatCanNeverSucceed makes net/http produce each error for
// real, so that a change of its text in a future Go release fails here.
func TestNetHTTPErrorsThatCanNeverSucceed(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	tests := []struct {
		name   string
		server func(http.Handler) *httptest.Server
		client func(*httptest.Server) *http.Client
		req    func(t *testing.T, srv *httptest.Server) *http.Request
		want   string
	}{
		{"a certificate signed by an unknown authority", quietTLSServer, freshClient, get, classify.ReasonCertificate},
		{"a certificate for another host", quietTLSServer, trustingClient, onHost("localhost"), classify.ReasonCertificate},
		{"an unsupported protocol scheme", httptest.NewServer, freshClient, withScheme("ftp"), classify.ReasonInvalidRequest},
		{"an invalid header field name", httptest.NewServer, freshClient, withHeader("Header-Name-\033", "v"), classify.ReasonInvalidRequest},
		{"an invalid header field value", httptest.NewServer, freshClient, withHeader("Header-Name", "bad value \033"), classify.ReasonInvalidRequest},
		{"an invalid method", httptest.NewServer, freshClient, withMethod("GET POST"), classify.ReasonInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tt.server(ok)
			defer srv.Close()
			client := tt.client(srv)
			defer client.CloseIdleConnections()
			resp, err := client.Do(tt.req(t, srv))
			if resp != nil {
				resp.Body.Close()
			}
			require.Error(t, err)
			assert.Equal(t, classify.Decision{Verdict: classify.Stop, Reason: tt.want}, classify.Default(err), "%v", err)
		})
	}
	t.Run("a redirect loop", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/", http.StatusFound)
		}))
		defer srv.Close()
		client := freshClient(srv)
		defer client.CloseIdleConnections()
		_, err := client.Get(srv.URL)
		require.Error(t, err)
		assert.Equal(t, classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonTooManyRedirects}, classify.Default(err), "%v", err)
	})
	t.Run("the same texts through a bare Transport", func(t *testing.T) {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		req, err := http.NewRequest(http.MethodGet, "ftp://example.com/", nil)
		require.NoError(t, err)
		_, err = tr.RoundTrip(req)
		require.Error(t, err)
		assert.Equal(t, classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonInvalidRequest}, classify.Default(err), "%v", err)
	})
}

// TestConnectTimeoutsSentNothing: a dial that times out never reached the
// server, so it is retried like a refused connection, keyed or not.
func TestConnectTimeoutsSentNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	connectTimeout := classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonConnectTimeout}
	t.Run("net.Dial", func(t *testing.T) {
		_, err := (&net.Dialer{Timeout: time.Nanosecond}).Dial("tcp", ln.Addr().String())
		require.Error(t, err)
		assert.Equal(t, connectTimeout, classify.Default(err), "%v", err)
	})
	t.Run("an HTTP client", func(t *testing.T) {
		tr := &http.Transport{DialContext: (&net.Dialer{Timeout: time.Nanosecond}).DialContext}
		defer tr.CloseIdleConnections()
		_, err := (&http.Client{Transport: tr}).Post("http://"+ln.Addr().String(), "text/plain", strings.NewReader("charge"))
		require.Error(t, err)
		assert.Equal(t, connectTimeout, classify.Default(err), "%v", err)
	})
}

// freshClient has a transport of its own, so that no test shares a
// connection pool, and trusts nothing but the system's roots.
func freshClient(*httptest.Server) *http.Client {
	return &http.Client{Transport: &http.Transport{}}
}

// trustingClient trusts the test server's certificate, for "example.com",
// 127.0.0.1 and ::1.
func trustingClient(srv *httptest.Server) *http.Client {
	tr := srv.Client().Transport.(*http.Transport).Clone()
	return &http.Client{Transport: tr}
}

// quietTLSServer is httptest.NewTLSServer without the log line for each
// handshake that the client refused.
func quietTLSServer(h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	return srv
}

func get(t *testing.T, srv *httptest.Server) *http.Request {
	return newRequest(t, http.MethodGet, srv.URL)
}

func onHost(host string) func(*testing.T, *httptest.Server) *http.Request {
	return func(t *testing.T, srv *httptest.Server) *http.Request {
		_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
		require.NoError(t, err)
		return newRequest(t, http.MethodGet, "https://"+net.JoinHostPort(host, port))
	}
}

func withScheme(scheme string) func(*testing.T, *httptest.Server) *http.Request {
	return func(t *testing.T, srv *httptest.Server) *http.Request {
		return newRequest(t, http.MethodGet, scheme+strings.TrimPrefix(srv.URL, "http"))
	}
}

func withHeader(name, value string) func(*testing.T, *httptest.Server) *http.Request {
	return func(t *testing.T, srv *httptest.Server) *http.Request {
		req := newRequest(t, http.MethodGet, srv.URL)
		req.Header[name] = []string{value}
		return req
	}
}

func withMethod(method string) func(*testing.T, *httptest.Server) *http.Request {
	return func(t *testing.T, srv *httptest.Server) *http.Request {
		req := newRequest(t, http.MethodGet, srv.URL)
		req.Method = method
		return req
	}
}

func newRequest(t *testing.T, method, url string) *http.Request {
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	return req
}
