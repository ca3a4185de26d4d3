module github.com/retrykit/retry/internal/faultproxy

go 1.25

require go.uber.org/goleak v1.3.0
