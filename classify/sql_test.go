package classify_test

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/retrykit/retry/classify"
)

// pgError stands for pgx's *pgconn.PgError and lib/pq's *pq.Error: all the
// classifier knows of a driver's error is its SQLState method.
type pgError struct{ code, msg string }

func (e *pgError) Error() string    { return "ERROR: " + e.msg + " (SQLSTATE " + e.code + ")" }
func (e *pgError) SQLState() string { return e.code }

func TestSQLClassifiesTheSQLSTATETable(t *testing.T) {
	retry := func(reason string) classify.Decision {
		return classify.Decision{Verdict: classify.Retry, Reason: reason}
	}
	ambiguous := func(reason string) classify.Decision {
		return classify.Decision{Verdict: classify.Retry, Reason: reason, Timeout: true}
	}
	stop := func(reason string) classify.Decision {
		return classify.Decision{Verdict: classify.Stop, Reason: reason}
	}
	tests := []struct {
		code string
		want classify.Decision
	}{
		{"40001", retry(classify.ReasonSerialization)},
		{"40P01", retry(classify.ReasonDeadlock)},
		{"53300", retry(classify.ReasonTooManyConnections)},
		{"55P03", retry(classify.ReasonLockNotAvailable)},
		{"08001", retry(classify.ReasonSQLCannotConnect)},
		{"08004", retry(classify.ReasonSQLCannotConnect)},
		{"57P03", retry(classify.ReasonSQLCannotConnect)},
		{"08000", ambiguous(classify.ReasonSQLConnection)},
		{"08003", ambiguous(classify.ReasonSQLConnection)},
		{"08006", ambiguous(classify.ReasonSQLConnection)},
		{"08007", ambiguous(classify.ReasonSQLConnection)},
		{"08P01", ambiguous(classify.ReasonSQLConnection)},
		{"57P01", ambiguous(classify.ReasonSQLShutdown)},
		{"57P02", ambiguous(classify.ReasonSQLShutdown)},
		{"40003", ambiguous(classify.ReasonCompletionUnknown)},
		{"23505", stop(classify.ReasonIntegrity)},
		{"23503", stop(classify.ReasonIntegrity)},
		{"22012", stop(classify.ReasonDataException)},
		{"22P02", stop(classify.ReasonDataException)},
		{"42601", stop(classify.ReasonSyntaxOrAccess)},
		{"42501", stop(classify.ReasonSyntaxOrAccess)},
		{"42P01", stop(classify.ReasonSyntaxOrAccess)},
		{"40000", stop(classify.ReasonTransactionRolled)},
		{"40002", stop(classify.ReasonTransactionRolled)},
		{"57014", classify.Decision{}},
		{"XX000", classify.Decision{}},
		{"", classify.Decision{}},
		{"4000", classify.Decision{}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("SQLSTATE %q is %v", tt.code, tt.want), func(t *testing.T) {
			err := fmt.Errorf("transfer: %w", &pgError{tt.code, "x"})
			assert.Equal(t, tt.want, classify.SQL(err))
			assert.Equal(t, tt.want, classify.SQLState(tt.code))
			assert.Equal(t, tt.want, classify.Default(err), "Default applies the SQL table")
		})
	}
}

func TestSQLReadsTheOutermostState(t *testing.T) {
	inner := &pgError{"23505", "duplicate key"}
	outer := &wrappedPg{pgError{"40001", "could not serialize"}, inner}
	assert.Equal(t, classify.ReasonSerialization, classify.SQL(outer).Reason)
	joined := errors.Join(errors.New("rollback failed"), &pgError{"40P01", "deadlock"})
	assert.Equal(t, classify.ReasonDeadlock, classify.SQL(joined).Reason, "found through Unwrap() []error")
}

type wrappedPg struct {
	pgError
	inner error
}

func (e *wrappedPg) Unwrap() error { return e.inner }

func TestSQLStateWinsOverTheNetworkErrorItWraps(t *testing.T) {
	// A lost connection reported with a SQLSTATE may have committed; the
	// ECONNRESET under it alone would be retried without that caution.
	err := &wrappedPg{pgError{"08006", "connection failure"}, &net.OpError{Op: "read", Err: syscall.ECONNRESET}}
	d := classify.Default(err)
	assert.True(t, d.Timeout, "%v", d)
	assert.Equal(t, classify.ReasonSQLConnection, d.Reason)
}

func TestMarkersWinOverSQLState(t *testing.T) {
	err := classify.Permanent(&pgError{"40001", "could not serialize"})
	assert.Equal(t, classify.Stop, classify.Default(err).Verdict)
}

func TestSQLWithoutAStateHasNoOpinion(t *testing.T) {
	assert.Equal(t, classify.Decision{}, classify.SQL(errors.New("plain")))
	assert.Equal(t, classify.Decision{}, classify.SQL(nil))
}

func TestClassifyingSQLAllocatesNothing(t *testing.T) {
	err := error(&pgError{"40001", "x"})
	assert.Zero(t, testing.AllocsPerRun(100, func() { classify.Default(err) }))
}

func ExampleSQL() {
	fmt.Println(classify.SQL(&pgError{"40001", "could not serialize access"}))
	fmt.Println(classify.SQL(&pgError{"57P01", "terminating connection due to administrator command"}))
	fmt.Println(classify.SQL(&pgError{"23505", "duplicate key value violates unique constraint"}))
	fmt.Println(classify.SQL(&pgError{"XX000", "internal error"}))
	// Output:
	// retry (sql serialization failure)
	// retry (sql server shutdown, timed out)
	// stop (sql integrity violation)
	// no opinion
}

func ExampleSQLState() {
	fmt.Println(classify.SQLState("40P01"))
	// Output: retry (sql deadlock)
}
