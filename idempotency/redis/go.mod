module github.com/retrykit/retry/idempotency/redis

go 1.25

require (
	github.com/redis/go-redis/v9 v9.22.0
	github.com/retrykit/retry v0.1.0
	github.com/retrykit/retry/internal/faultproxy v0.1.0
	github.com/retrykit/retry/internal/redisbound v0.1.0
	github.com/retrykit/retry/internal/redistest v0.1.0
	github.com/retrykit/retry/internal/rediswait v0.1.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/sony/gobreaker/v2 v2.4.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.30.0 // indirect
)

replace github.com/retrykit/retry => ../..

replace github.com/retrykit/retry/internal/rediswait => ../../internal/rediswait

replace github.com/retrykit/retry/internal/redistest => ../../internal/redistest

replace github.com/retrykit/retry/internal/faultproxy => ../../internal/faultproxy

replace github.com/retrykit/retry/internal/redisbound => ../../internal/redisbound
