module github.com/retrykit/retry/bench

go 1.25.0

replace github.com/retrykit/retry => ../

require (
	github.com/avast/retry-go/v5 v5.1.1
	github.com/cenkalti/backoff/v4 v4.3.0
	github.com/cenkalti/backoff/v7 v7.0.3
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/jackc/pgx/v5 v5.12.0
	github.com/retrykit/retry v0.0.0
	github.com/sethvargo/go-retry v0.5.0
	gonum.org/v1/plot v0.17.0
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	golang.org/x/sync v0.22.0 // indirect
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
	github.com/retrykit/retry/idempotency/postgres v0.0.0
	github.com/retrykit/retry/sqlretry v0.0.0
	github.com/sony/gobreaker/v2 v2.4.0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

replace github.com/retrykit/retry/sqlretry => ../sqlretry

replace github.com/retrykit/retry/idempotency/postgres => ../idempotency/postgres
