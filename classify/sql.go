package classify

// Reasons reported by SQL. They are stable labels, fit for logs and metric
// attributes.
const (
	ReasonSerialization      = "sql serialization failure"
	ReasonDeadlock           = "sql deadlock"
	ReasonCompletionUnknown  = "sql statement completion unknown"
	ReasonSQLConnection      = "sql connection failure"
	ReasonSQLCannotConnect   = "sql cannot connect"
	ReasonSQLShutdown        = "sql server shutdown"
	ReasonTooManyConnections = "sql too many connections"
	ReasonLockNotAvailable   = "sql lock not available"
	ReasonIntegrity          = "sql integrity violation"
	ReasonDataException      = "sql data exception"
	ReasonSyntaxOrAccess     = "sql syntax error or access rule violation"
	ReasonTransactionRolled  = "sql transaction rolled back"
	// ReasonAmbiguousCommit is package sqlretry's: the connection was lost
	// during COMMIT, so the transaction may or may not have committed.
	ReasonAmbiguousCommit = "sql ambiguous commit"
)

// sqlStater is the method of a database error that reports its SQLSTATE:
// pgx's *pgconn.PgError and lib/pq's *pq.Error have it.
type sqlStater interface{ SQLState() string }

// SQL classifies database errors by their SQLSTATE, read from the first error
// in the chain with a method SQLState() string, by the SQL table of the
// package documentation. It imports no driver. States it does not list get no
// opinion, so the general or strict fallback decides.
func SQL(err error) Decision { f := scan(err); return f.sqlRule() }

func (f *facts) sqlRule() Decision {
	if f.sqlState == nil {
		return Decision{}
	}
	return SQLState(f.sqlState.SQLState())
}

// SQLState classifies a SQLSTATE code alone (five characters, such as
// "40001"); a code the table does not list gets no opinion.
func SQLState(code string) Decision {
	switch code {
	case "40001":
		return Decision{Verdict: Retry, Reason: ReasonSerialization}
	case "40P01":
		return Decision{Verdict: Retry, Reason: ReasonDeadlock}
	case "40003":
		return Decision{Verdict: Retry, Reason: ReasonCompletionUnknown, Timeout: true}
	case "08001", "08004":
		return Decision{Verdict: Retry, Reason: ReasonSQLCannotConnect}
	case "57P01", "57P02":
		return Decision{Verdict: Retry, Reason: ReasonSQLShutdown, Timeout: true}
	case "57P03":
		return Decision{Verdict: Retry, Reason: ReasonSQLCannotConnect}
	case "53300":
		return Decision{Verdict: Retry, Reason: ReasonTooManyConnections}
	case "55P03":
		return Decision{Verdict: Retry, Reason: ReasonLockNotAvailable}
	}
	return sqlClass(code)
}

// sqlClass classifies by the first two characters, the class, the codes
// SQLState does not list one by one.
func sqlClass(code string) Decision {
	if len(code) != 5 {
		return Decision{}
	}
	switch code[:2] {
	case "08":
		return Decision{Verdict: Retry, Reason: ReasonSQLConnection, Timeout: true}
	case "23":
		return Decision{Verdict: Stop, Reason: ReasonIntegrity}
	case "22":
		return Decision{Verdict: Stop, Reason: ReasonDataException}
	case "42":
		return Decision{Verdict: Stop, Reason: ReasonSyntaxOrAccess}
	case "40":
		return Decision{Verdict: Stop, Reason: ReasonTransactionRolled}
	}
	return Decision{}
}
