// Command sql-transfer moves money between accounts in PostgreSQL from
// concurrent workers under SERIALIZABLE isolation. Each transfer is a
// transaction retried from BEGIN by sqlretry when PostgreSQL reports a
// serialization failure, and carries an idempotency key completed in that same
// transaction (idempotency/postgres's Store.Tx): a client that submits a
// transfer twice gets the first one's receipt, and the money moves once. At
// the end it prints the transfers, the serialization failures retried, the
// duplicates prevented and the total, which is conserved.
//
//	go run ./examples/sql-transfer                    # starts its own PostgreSQL: needs the server binaries
//	go run ./examples/sql-transfer -db postgres://…   # uses yours, in tables of its own, dropped at the end
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/retrykit/retry/internal/pgtest"
)

func main() {
	url := flag.String("db", "", "URL of the PostgreSQL database to use (default: start a PostgreSQL server on a free loopback port)")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *url); err != nil {
		fmt.Fprintln(os.Stderr, "sql-transfer:", err)
		os.Exit(1)
	}
}

// run runs the example against the database at url, or, if url is empty,
// against a PostgreSQL server it starts and stops.
func run(ctx context.Context, w io.Writer, url string) error {
	if url == "" {
		srv, err := startPostgres()
		if err != nil {
			return err
		}
		defer srv.Stop()
		fmt.Fprintf(w, "postgres: no -db given: started PostgreSQL on %s:%d (stopped on exit)\n", srv.Host, srv.Port)
		if url, err = srv.CreateDB(); err != nil {
			return err
		}
	}
	b, err := openBank(ctx, url)
	if err != nil {
		return err
	}
	defer b.close()
	return b.simulate(ctx, w)
}

// startPostgres starts a PostgreSQL server for this program, the way the
// library's tests start theirs (internal/pgtest): initdb in a temporary
// directory, a free loopback port, durability off.
func startPostgres() (*pgtest.Server, error) {
	bin, err := pgtest.Binaries()
	if err == nil {
		var srv *pgtest.Server
		if srv, err = pgtest.Launch(bin); err == nil {
			return srv, nil
		}
	}
	return nil, fmt.Errorf("no -db given, and no PostgreSQL server could be started (install the server binaries, e.g. apt-get install postgresql): %w", err)
}
