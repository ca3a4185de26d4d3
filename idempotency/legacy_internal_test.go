package idempotency

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestARecordStoredWithoutTheHostStillReplays stores a response under the
// fingerprint of the versions before the host was part of it, as an upgrade
// finds it, and checks that its retry replays rather than gets a 422.
func TestARecordStoredWithoutTheHostStillReplays(t *testing.T) {
	s, err := NewMemoryStore(MemoryConfig{})
	if err != nil {
		t.Fatal(err)
	}
	key := StoreKey{Scope: "acct-1", Key: "order-1"}
	old := NewFingerprint([]byte(http.MethodPost), []byte("/orders"), []byte(""), []byte("{}"))
	if _, _, err := s.Claim(t.Context(), key, Record{Status: InProgress, Token: "before", Fingerprint: old}, time.Minute); err != nil {
		t.Fatal(err)
	}
	stored := encodeResponse(http.StatusCreated, http.Header{}, []byte("order 1"), nil)
	if err := s.Complete(t.Context(), key, Record{Status: Succeeded, Token: "before", Fingerprint: old, Value: stored}, time.Hour); err != nil {
		t.Fatal(err)
	}
	guard, err := Middleware(s, WithScope(func(*http.Request) string { return "acct-1" }))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		body, want string
		status     int
	}{
		{"{}", "order 1", http.StatusCreated},
		{`{"other":1}`, "", http.StatusUnprocessableEntity},
	} {
		req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(tt.body))
		req.Header.Set(HeaderKey, "order-1")
		rec := httptest.NewRecorder()
		guard(http.NotFoundHandler()).ServeHTTP(rec, req)
		if rec.Code != tt.status || tt.want != "" && rec.Body.String() != tt.want {
			t.Errorf("a retry with body %s got %d %q; want %d %q", tt.body, rec.Code, rec.Body, tt.status, tt.want)
		}
	}
}
