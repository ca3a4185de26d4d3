package dlq_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
)

func TestSignaturesRemoveWhatVariesBetweenOccurrences(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"numbers and an IPv4 address", "timeout after 3012ms on 10.0.0.7", "timeout after <n>ms on <addr>"},
		{"an address with its port, before the message's colon", "dial tcp 10.0.0.7:443: connect: connection refused", "dial tcp <addr>: connect: connection refused"},
		{"an IPv6 address", "dial tcp [2001:db8::1]:443: i/o timeout", "dial tcp <addr>: i/o timeout"},
		{"IPv6 loopback", "connect ::1 refused", "connect <addr> refused"},
		{"a double colon glued to words is not an address", "pkg::Type failed", "pkg::Type failed"},
		{"a UUID", "job 123e4567-e89b-12d3-a456-426614174000 failed", "job <uuid> failed"},
		{"an RFC 3339 timestamp", "at 2026-11-29T10:06:00.123Z: expired", "at <time>: expired"},
		{"time.Time's String", "at 2026-11-29 10:06:00.5 +0000 UTC expired", "at <time> expired"},
		{"an HTTP date", "retry at Sun, 06 Nov 1994 08:49:37 GMT", "retry at <time>"},
		{"a clock time", "since 08:49:37", "since <time>"},
		{"an e-mail address", "mailbox bob.smith+x@example.co.uk full", "mailbox <email> full"},
		{"a hex id", "object deadbeef42 missing", "object <hex> missing"},
		{"a 0x number", "fault at 0x1f", "fault at <hex>"},
		{"a long number is a number", "took 123456789 ns", "took <n> ns"},
		{"an opaque token", "charge ch_3MtwBwLkdIwHu7ix28a3tqPa declined", "charge <id> declined"},
		{"digits inside a host name", "redis-17:6379 down", "redis-<n>:<n> down"},
		{"spaces", "  a \t b\n", "a b"},
		{"words without digits stay", "content filtered", "content filtered"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is normalised", func(t *testing.T) {
			l := dlq.Letter{Last: dlq.Failure{Type: "T", Error: tt.in, Decision: classify.Decision{Reason: "c"}}}
			if got, want := l.Signature(), "T [c] "+tt.want; got != want {
				t.Fatalf("the signature of %q is %q, want %q", tt.in, got, want)
			}
		})
	}
}

func TestGroupsPutOneCauseTogetherAndOthersApart(t *testing.T) {
	letter := func(id string, err error, at time.Time) dlq.Letter {
		l, _ := dlq.NewLetter(dlq.Job{ID: id, Source: "s"}, exhausted(3, err), at)
		return l
	}
	ls := []dlq.Letter{
		letter("1", errors.New("timeout after 3012ms on 10.0.0.7"), t0),
		letter("2", &classify.StatusError{Code: http.StatusUnauthorized}, t0.Add(time.Second)),
		letter("3", errors.New("timeout after 998ms on 10.0.0.9"), t0.Add(2*time.Second)),
		letter("4", fmt.Errorf("call: %w", errors.New("timeout after 5ms on 10.0.0.1")), t0.Add(3*time.Second)),
		letter("5", &classify.StatusError{Code: http.StatusServiceUnavailable}, t0.Add(4*time.Second)),
	}
	gs := dlq.GroupLetters(ls)
	if len(gs) != 4 {
		t.Fatalf("%d groups, want 4 (timeouts; the wrapped timeout; 401; 503): %+v", len(gs), gs)
	}
	g := gs[0]
	if g.Count != 2 || g.ID != ls[0].Group() || g.Example.Job.ID != "3" || !g.FirstSeen.Equal(t0) || !g.LastSeen.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("first group = %+v; want the two bare timeouts, example 3, seen t0 to t0+2s", g)
	}
	if g.Signature != "*errors.errorString [unclassified] timeout after <n>ms on <addr>" || g.Class != "unclassified" {
		t.Fatalf("signature = %q, class %q", g.Signature, g.Class)
	}
	if ls[1].Group() == ls[4].Group() {
		t.Fatal("a 401 and a 503 share a group")
	}
}

func TestSignatureIsBounded(t *testing.T) {
	a, _ := dlq.NewLetter(dlq.Job{ID: "a", Source: "s"}, exhausted(1, errors.New("bad request: "+string(make([]byte, 300))+"A")), t0)
	b, _ := dlq.NewLetter(dlq.Job{ID: "b", Source: "s"}, exhausted(1, errors.New("bad request: "+string(make([]byte, 300))+"B")), t0)
	if a.Group() != b.Group() {
		t.Fatal("messages differing after 200 bytes have different groups")
	}
}
