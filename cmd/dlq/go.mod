module github.com/retrykit/retry/cmd/dlq

go 1.25.0

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/mattn/go-isatty v0.0.24
	github.com/redis/go-redis/v9 v9.22.0
	github.com/retrykit/retry v0.1.0
	github.com/retrykit/retry/dlq/redis v0.1.0
	github.com/retrykit/retry/dlq/sqlite v0.1.0
	github.com/retrykit/retry/internal/redistest v0.1.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/ncruces/go-strftime v1.0.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/retrykit/retry/internal/rediswait v0.1.0 // indirect
	github.com/sony/gobreaker/v2 v2.4.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	modernc.org/libc v1.75.7 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.59.0 // indirect
)

replace (
	github.com/retrykit/retry => ../..
	github.com/retrykit/retry/dlq/redis => ../../dlq/redis
	github.com/retrykit/retry/dlq/sqlite => ../../dlq/sqlite
)

replace github.com/retrykit/retry/internal/redistest => ../../internal/redistest

replace github.com/retrykit/retry/internal/rediswait => ../../internal/rediswait
