package httpretry_test

import (
	"net/http"
	"testing"

	"github.com/retrykit/retry/httpretry"
)

// TestASuccessAllocatesNothingInTheTransport guards the hot path: a request
// that succeeds at once costs the transport no allocation (its call stays on
// the stack; the Result is reported only when the caller asks for it).
func TestASuccessAllocatesNothingInTheTransport(t *testing.T) {
	ok := &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody}
	base := roundTripFunc(func(*http.Request) (*http.Response, error) { return ok, nil })
	tr := transport(t, defaults(t), httpretry.WithBase(base))
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/items/7", nil)
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("a first-attempt success allocates %v times in the transport, want 0", n)
	}
}
