module github.com/retrykit/retry/idempotency/postgres

go 1.25.0

require github.com/retrykit/retry v0.1.0

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/retrykit/retry/internal/faultproxy v0.1.0
	github.com/retrykit/retry/internal/pgtest v0.1.0
	github.com/retrykit/retry/sqlretry v0.1.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/sony/gobreaker/v2 v2.4.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

replace github.com/retrykit/retry => ../..

replace github.com/retrykit/retry/sqlretry => ../../sqlretry

replace github.com/retrykit/retry/internal/pgtest => ../../internal/pgtest

replace github.com/retrykit/retry/internal/faultproxy => ../../internal/faultproxy
