module github.com/retrykit/retry/grpcretry

go 1.26.0

replace github.com/retrykit/retry => ../

require (
	github.com/retrykit/retry v0.1.0
	github.com/retrykit/retry/internal/faultproxy v0.1.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261110000943-09e21b237f2c
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/sony/gobreaker/v2 v2.4.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace github.com/retrykit/retry/internal/faultproxy => ../internal/faultproxy
