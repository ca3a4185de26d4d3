module github.com/retrykit/retry/bench

go 1.26.0

replace github.com/retrykit/retry => ../

require (
	github.com/avast/retry-go/v5 v5.1.1
	github.com/cenkalti/backoff/v4 v4.3.0
	github.com/cenkalti/backoff/v7 v7.0.3
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/grpc-ecosystem/go-grpc-middleware/v2 v2.3.4
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/redis/go-redis/v9 v9.22.0
	github.com/retrykit/retry v0.1.0
	github.com/retrykit/retry/idempotency/redis v0.1.0
	github.com/retrykit/retry/internal/pgtest v0.1.0
	github.com/retrykit/retry/internal/rediswait v0.1.0 // indirect
	github.com/retrykit/retry/otelretry v0.1.0
	github.com/sethvargo/go-retry v0.5.0
	github.com/stretchr/testify v1.12.1
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/metric v1.47.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
	gonum.org/v1/plot v0.17.0
	google.golang.org/grpc v1.85.0
)

require (
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.0.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/retrykit/retry/internal/faultproxy v0.1.0 // indirect
	github.com/retrykit/retry/internal/redisbound v0.1.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261110000943-09e21b237f2c // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	modernc.org/libc v1.75.7 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.59.0 // indirect
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
	github.com/jackc/pgx/v5 v5.12.0
	github.com/retrykit/retry/dlq/redis v0.1.0
	github.com/retrykit/retry/dlq/sqlite v0.1.0
	github.com/retrykit/retry/grpcretry v0.1.0
	github.com/retrykit/retry/idempotency/postgres v0.1.0
	github.com/retrykit/retry/internal/redistest v0.1.0
	github.com/retrykit/retry/sqlretry v0.1.0
	github.com/sony/gobreaker/v2 v2.4.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace github.com/retrykit/retry/otelretry => ../otelretry

replace github.com/retrykit/retry/grpcretry => ../grpcretry

replace github.com/retrykit/retry/idempotency/postgres => ../idempotency/postgres

replace github.com/retrykit/retry/sqlretry => ../sqlretry

replace github.com/retrykit/retry/internal/pgtest => ../internal/pgtest

replace github.com/retrykit/retry/dlq/sqlite => ../dlq/sqlite

replace github.com/retrykit/retry/dlq/redis => ../dlq/redis

replace github.com/retrykit/retry/idempotency/redis => ../idempotency/redis

replace github.com/retrykit/retry/internal/rediswait => ../internal/rediswait

replace github.com/retrykit/retry/internal/redistest => ../internal/redistest

replace github.com/retrykit/retry/internal/faultproxy => ../internal/faultproxy

replace github.com/retrykit/retry/internal/redisbound => ../internal/redisbound
