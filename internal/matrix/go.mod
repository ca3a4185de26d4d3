module github.com/retrykit/retry/internal/matrix

go 1.26.0

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/retrykit/retry v0.1.0
	github.com/retrykit/retry/grpcretry v0.1.0
	github.com/retrykit/retry/internal/pgtest v0.1.0
	github.com/retrykit/retry/sqlretry v0.1.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	google.golang.org/grpc v1.85.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/retrykit/retry/internal/faultproxy v0.1.0 // indirect
	github.com/sony/gobreaker/v2 v2.4.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261110000943-09e21b237f2c // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/retrykit/retry => ../..

replace github.com/retrykit/retry/grpcretry => ../../grpcretry

replace github.com/retrykit/retry/internal/pgtest => ../pgtest

replace github.com/retrykit/retry/sqlretry => ../../sqlretry

replace github.com/retrykit/retry/internal/faultproxy => ../faultproxy
