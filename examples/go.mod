module github.com/retrykit/retry/examples

go 1.26.0

require (
	github.com/prometheus/client_golang v1.25.0
	github.com/redis/go-redis/v9 v9.22.0
	github.com/retrykit/retry v0.1.0
	github.com/retrykit/retry/internal/pgtest v0.1.0
	github.com/retrykit/retry/internal/redistest v0.1.0
	github.com/retrykit/retry/otelretry v0.1.0
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/exporters/prometheus v0.69.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
	go.uber.org/goleak v1.3.0
	google.golang.org/grpc v1.85.0
	modernc.org/sqlite v1.59.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/ncruces/go-strftime v1.0.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/otlptranslator v1.0.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/retrykit/retry/internal/faultproxy v0.1.0 // indirect
	github.com/retrykit/retry/internal/redisbound v0.1.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261110000943-09e21b237f2c // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	modernc.org/libc v1.75.7 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/retrykit/retry/dlq/redis v0.1.0
	github.com/retrykit/retry/dlq/sqlite v0.1.0
	github.com/retrykit/retry/grpcretry v0.1.0
	github.com/retrykit/retry/idempotency/postgres v0.1.0
	github.com/retrykit/retry/idempotency/redis v0.1.0
	github.com/retrykit/retry/internal/rediswait v0.1.0 // indirect
	github.com/retrykit/retry/sqlretry v0.1.0 // indirect
	github.com/sony/gobreaker/v2 v2.4.0 // indirect
)

replace github.com/retrykit/retry => ../

replace github.com/retrykit/retry/dlq/sqlite => ../dlq/sqlite

replace github.com/retrykit/retry/dlq/redis => ../dlq/redis

replace github.com/retrykit/retry/idempotency/redis => ../idempotency/redis

replace github.com/retrykit/retry/otelretry => ../otelretry

replace github.com/retrykit/retry/grpcretry => ../grpcretry

replace github.com/retrykit/retry/idempotency/postgres => ../idempotency/postgres

replace github.com/retrykit/retry/sqlretry => ../sqlretry

replace github.com/retrykit/retry/internal/pgtest => ../internal/pgtest

replace github.com/retrykit/retry/internal/redistest => ../internal/redistest

replace github.com/retrykit/retry/internal/rediswait => ../internal/rediswait

replace github.com/retrykit/retry/internal/faultproxy => ../internal/faultproxy

replace github.com/retrykit/retry/internal/redisbound => ../internal/redisbound
