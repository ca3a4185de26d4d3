module github.com/retrykit/retry

go 1.25

require (
	github.com/cenkalti/backoff/v4 v4.3.0
	github.com/sony/gobreaker/v2 v2.4.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
