package httpretry_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
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

// TestAKeyedSuccessCostsTheTransportOnlyTheCallKey: with a Retrier whose
// stages read the call key, a request that succeeds at once allocates no
// more through the transport than the Retrier's own call given the key's
// context (breaker.WithKey: 2 allocations).
func TestAKeyedSuccessCostsTheTransportOnlyTheCallKey(t *testing.T) {
	cd, err := breaker.NewCooldowns(breaker.CooldownConfig{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := breaker.New(breaker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for name, opt := range map[string]retry.Option{"cooldowns": retry.WithCooldowns(cd), "breakers": retry.WithBreakers(b)} {
		t.Run(name, func(t *testing.T) {
			r, err := retry.New(opt)
			if err != nil {
				t.Fatal(err)
			}
			ok := &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody}
			base := roundTripFunc(func(*http.Request) (*http.Response, error) { return ok, nil })
			tr := transport(t, r, httpretry.WithBase(base))
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/items/7", nil)
			key := breaker.Key{Target: "api.test"}
			alone := testing.AllocsPerRun(1000, func() {
				if err := r.Do(breaker.WithKey(req.Context(), key), func(context.Context) error { return nil }); err != nil {
					t.Fatal(err)
				}
			})
			through := testing.AllocsPerRun(1000, func() {
				if _, err := tr.RoundTrip(req); err != nil {
					t.Fatal(err)
				}
			})
			if through != alone {
				t.Errorf("a keyed first-attempt success allocates %v times through the transport, %v in the Retrier alone with the key", through, alone)
			}
			t.Logf("%v allocations, the call key's context value included", through)
		})
	}
}
