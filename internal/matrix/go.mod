module github.com/retrykit/retry/internal/matrix

go 1.25.0

require (
	github.com/retrykit/retry v0.1.0
	github.com/retrykit/retry/grpcretry v0.1.0
	github.com/retrykit/retry/internal/pgtest v0.1.0
	github.com/retrykit/retry/sqlretry v0.1.0
)

replace github.com/retrykit/retry => ../..

replace github.com/retrykit/retry/grpcretry => ../../grpcretry

replace github.com/retrykit/retry/internal/pgtest => ../pgtest

replace github.com/retrykit/retry/sqlretry => ../../sqlretry
