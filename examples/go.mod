module github.com/retrykit/retry/examples

go 1.25.0

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/redis/go-redis/v9 v9.22.0
	github.com/retrykit/retry v0.0.0
	go.uber.org/goleak v1.3.0
	modernc.org/sqlite v1.59.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.0.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	modernc.org/libc v1.75.7 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)

require (
	github.com/retrykit/retry/dlq/redis v0.0.0
	github.com/retrykit/retry/dlq/sqlite v0.0.0
	github.com/retrykit/retry/idempotency/postgres v0.0.0
	github.com/retrykit/retry/idempotency/redis v0.0.0
	github.com/retrykit/retry/sqlretry v0.0.0 // indirect
	github.com/sony/gobreaker/v2 v2.4.0 // indirect
)

replace github.com/retrykit/retry => ../

replace github.com/retrykit/retry/dlq/sqlite => ../dlq/sqlite

replace github.com/retrykit/retry/dlq/redis => ../dlq/redis

replace github.com/retrykit/retry/idempotency/redis => ../idempotency/redis

replace github.com/retrykit/retry/sqlretry => ../sqlretry

replace github.com/retrykit/retry/idempotency/postgres => ../idempotency/postgres
