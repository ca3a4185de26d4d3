package main

import (
	"bytes"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/retrykit/retry/internal/pgtest"
)

// TestMain stops the test's PostgreSQL after the tests and fails the package
// if a goroutine outlives them (the pool is closed by run).
func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }

// want is the output; only the count of serialization failures differs
// between runs (it depends on how the workers interleave).
var want = regexp.MustCompile(`^accounts: 10 × 1000 = 10000
transfers: 800 committed \(8 workers × 100, SERIALIZABLE\), each with its idempotency key
serialization failures retried: \d+ \(whole transactions, from BEGIN\)
duplicates prevented: 800 \(every transfer submitted twice: the second got the first's receipt\)
total: 10000 \(conserved: true\)
$`)

func TestSQLTransfer(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out, pgtest.DB(t)); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if !want.Match(out.Bytes()) {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	t.Logf("\n%s", out.String())
}

func TestSQLTransferStartsItsOwnPostgres(t *testing.T) {
	pgtest.Shared(t) // skips, or fails with RETRY_REQUIRE_POSTGRES=1, without the binaries
	var out bytes.Buffer
	if err := run(t.Context(), &out, ""); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	first, rest, _ := strings.Cut(out.String(), "\n")
	m := regexp.MustCompile(`^postgres: no -db given: started PostgreSQL on (127\.0\.0\.1:\d+) \(stopped on exit\)$`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("first line %q does not say which PostgreSQL was started", first)
	}
	if !want.MatchString(rest) {
		t.Errorf("output:\n%s\nwant:\n%s", rest, want)
	}
	if conn, err := net.DialTimeout("tcp", m[1], time.Second); err == nil {
		conn.Close()
		t.Errorf("PostgreSQL on %s still accepts connections after run returned", m[1])
	}
}
