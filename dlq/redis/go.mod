module github.com/retrykit/retry/dlq/redis

go 1.25

require (
	github.com/redis/go-redis/v9 v9.22.0
	github.com/retrykit/retry v0.1.0
	github.com/retrykit/retry/internal/rediswait v0.1.0
	github.com/retrykit/retry/internal/redistest v0.1.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
)

replace github.com/retrykit/retry => ../..

replace github.com/retrykit/retry/internal/rediswait => ../../internal/rediswait

replace github.com/retrykit/retry/internal/redistest => ../../internal/redistest
