module github.com/retrykit/retry/internal/pgtest

go 1.25

require (
	github.com/retrykit/retry/internal/faultproxy v0.1.0
	go.uber.org/goleak v1.3.0
)

replace github.com/retrykit/retry/internal/faultproxy => ../faultproxy
