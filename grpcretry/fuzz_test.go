package grpcretry

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"
)

// FuzzPushback feeds the server's grpc-retry-pushback-ms trailer to its
// parser: it never panics, never returns a negative wait, accepts what
// grpc-go accepts (a decimal integer, not negative; an overflowing one
// saturates) and says "do not retry" for anything else.
func FuzzPushback(f *testing.F) {
	for _, s := range []string{"0", "10", "-1", "soon", "", "+5", "-0", "99999999999999999999", " 1", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		wait, said, ok := pushback(metadata.MD{pushbackTrailer: {v}})
		n, err := strconv.ParseInt(v, 10, 64)
		overflow := errors.Is(err, strconv.ErrRange) && v[0] != '-'
		wantOK := (err == nil && n >= 0) || overflow
		switch {
		case ok != wantOK || said != ok:
			t.Fatalf("pushback(%q) = %v, said %v, ok %v; want ok %v", v, wait, said, ok, wantOK)
		case wait < 0:
			t.Fatalf("pushback(%q) = %v: negative", v, wait)
		case ok && !overflow && wait != time.Duration(min(n, maxMillis))*time.Millisecond:
			t.Fatalf("pushback(%q) = %v, want %d ms", v, wait, n)
		}
	})
}
