package httpretry_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/chaos"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func events(t *testing.T, stream string) ([]httpretry.Event, error) {
	t.Helper()
	s := httpretry.NewSSE(io.NopCloser(strings.NewReader(stream)))
	defer s.Close()
	var out []httpretry.Event
	for {
		e, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
}

func TestSSEParsing(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []httpretry.Event
	}{
		{"data lines are joined", "data: a\ndata: b\n\n", []httpretry.Event{{Data: "a\nb"}}},
		{"fields", "event: delta\nid: 7\nretry: 1500\ndata: x\n\n", []httpretry.Event{{ID: "7", Event: "delta", Data: "x", Retry: 1500 * time.Millisecond}}},
		{"the id carries over", "id: 1\ndata: a\n\ndata: b\n\n", []httpretry.Event{{ID: "1", Data: "a"}, {ID: "1", Data: "b"}}},
		{"comments and unknown fields are ignored", ": keep-alive\nfoo: bar\ndata: a\n\n", []httpretry.Event{{Data: "a"}}},
		{"CRLF line endings", "data: a\r\n\r\ndata: b\r\n\r\n", []httpretry.Event{{Data: "a"}, {Data: "b"}}},
		{"CR line endings", "data: a\r\rdata: b\r\r", []httpretry.Event{{Data: "a"}, {Data: "b"}}},
		{"no space after the colon", "data:a\n\n", []httpretry.Event{{Data: "a"}}},
		{"an empty data line", "data\n\n", []httpretry.Event{{Data: ""}}},
		{"blank lines alone dispatch nothing", "\n\n\ndata: a\n\n", []httpretry.Event{{Data: "a"}}},
		{"[DONE] ends the stream", "data: a\n\ndata: [DONE]\n\ndata: b\n\n", []httpretry.Event{{Data: "a"}}},
		{"an unfinished last event is dropped", "data: a\n\ndata: b", []httpretry.Event{{Data: "a"}}},
		{"a bad retry is ignored", "retry: soon\ndata: a\n\n", []httpretry.Event{{Data: "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := events(t, tt.stream)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSSEInBandErrors(t *testing.T) {
	for name, stream := range map[string]string{
		"an error event":        "data: a\n\nevent: error\ndata: {\"message\":\"backend crashed\"}\n\n",
		"a JSON error object":   "data: a\n\ndata: {\"error\":{\"message\":\"backend crashed\",\"type\":\"server_error\"}}\n\n",
		"an error event, plain": "data: a\n\nevent: error\ndata: backend crashed\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			got, err := events(t, stream)
			assert.Len(t, got, 1)
			var ee *httpretry.EventError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, "backend crashed", ee.Message)
			assert.Equal(t, "httpretry: the stream reported an error: backend crashed", err.Error())
		})
	}
	got, err := events(t, "data: {\"error\":null,\"text\":\"fine\"}\n\n")
	require.NoError(t, err, "a null error is no error")
	assert.Len(t, got, 1)
}

func TestSSEBoundsALineAt4MiB(t *testing.T) {
	_, err := events(t, "data: "+strings.Repeat("x", 4<<20+1)+"\n\n")
	assert.Error(t, err)
}

func FuzzSSE(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "event: error\ndata: {\"message\":1}\n\n", "data: {\"error\":{}}\r\n\r\n", "id: \x00\n\n", "retry: 99999999999\n\n", ":\r\r\r", "data: [DONE]\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stream string) {
		s := httpretry.NewSSE(io.NopCloser(strings.NewReader(stream)))
		for range 1000 {
			e, err := s.Next()
			if err != nil {
				return
			}
			if e.Retry < 0 {
				t.Fatalf("negative retry %v", e.Retry)
			}
		}
	})
}

// llm is a streaming endpoint that streams two deltas and ends the way the
// test says, behind faults: its first stream is refused with a 503 and, to
// "cut", the connection breaks after the two deltas.
func llm(t *testing.T, end string) (*server, *chaos.Scenario) {
	const deltas = "data: {\"delta\":\"The \"}\n\ndata: {\"delta\":\"answer\"}\n\n"
	ends := map[string]string{
		"done":  "data: [DONE]\n\n",
		"error": "event: error\ndata: {\"message\":\"model crashed\"}\n\n",
		"cut":   "data: [DONE]\n\n",
	}
	srv := newServer(t, reply{status: 200, header: http.Header{"Content-Type": {"text/event-stream"}}, body: deltas + ends[end]})
	faults := []chaos.Fault{chaos.Throttle(503, 0)}
	if end == "cut" {
		faults = append(faults, chaos.Truncate(len(deltas)))
	}
	return srv, scripted(t, faults...)
}

func TestOpenSSE(t *testing.T) {
	for _, tt := range []struct {
		end       string
		wantErr   string
		delivered int
	}{
		{"done", "", 2},
		{"error", "model crashed", 2},
		{"cut", "unexpected EOF", 2},
	} {
		t.Run("a stream that ends with "+tt.end, func(t *testing.T) {
			srv, faults := llm(t, tt.end)
			c := &http.Client{Transport: faults.Transport(base(t))}
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat", strings.NewReader(`{"stream":true}`))
			s, err := stream.Open(t.Context(), quick(t, retry.Idempotent()), httpretry.OpenSSE(c, req))
			require.NoError(t, err)
			defer s.Close()
			assert.Equal(t, int64(2), faults.Stats().Calls, "the refusal before the stream began was retried")
			assert.Equal(t, 2, s.Stats().Attempts)
			var got []string
			failed := false
			for e, err := range s.All() {
				if err != nil {
					if tt.wantErr == "" {
						t.Fatalf("unexpected error: %v", err)
					}
					failed = true
					assert.ErrorContains(t, err, tt.wantErr)
					var serr *stream.Error[httpretry.Event]
					require.ErrorAs(t, err, &serr)
					assert.Equal(t, tt.delivered, serr.Delivered)
					break
				}
				got = append(got, e.Data)
			}
			assert.Equal(t, []string{`{"delta":"The "}`, `{"delta":"answer"}`}, got)
			assert.Equal(t, tt.wantErr != "", failed, "the stream ends as the server (or the network) ended it")
			assert.Equal(t, int64(2), faults.Stats().Calls, "never reopened after the first chunk")
			assert.Equal(t, 1, srv.count())
		})
	}
}

func TestOpenSSERefusesWhatIsNotAStream(t *testing.T) {
	srv := newServer(t, reply{status: 200, body: "{}", header: http.Header{"Content-Type": {"application/json"}}})
	c := &http.Client{Transport: base(t)}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	_, err := stream.Open(t.Context(), quick(t), httpretry.OpenSSE(c, req))
	assert.ErrorContains(t, err, `answered "application/json", not an event stream`)
	assert.Equal(t, 1, srv.count())
	var se *classify.StatusError
	assert.False(t, errors.As(err, &se))
}

func TestOpenSSEThroughATransportUsesItsClassification(t *testing.T) {
	srv := newServer(t, reply{status: 429, body: `{"error":{"code":"spend-cap-exceeded"}}`, header: retryAfter("1")})
	kind := func(_ *http.Response, body []byte) string {
		if strings.Contains(string(body), "spend-cap-exceeded") {
			return classify.KindSpendCapExceeded
		}
		return ""
	}
	c := client(t, quick(t), httpretry.WithBase(base(t)), httpretry.WithKind(kind))
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	_, err := stream.Open(t.Context(), quick(t), httpretry.OpenSSE(c, req))
	assert.ErrorIs(t, err, classify.ErrSpendCap, "the transport read the kind from the body")
	assert.Equal(t, 1, srv.count(), "a spend cap is never retried, by either loop")
}
