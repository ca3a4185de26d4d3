// Command pipeline runs a classic retry exercise: each job calls an
// LLM, saves the answer to a database and emails the user, with a retry policy
// per step, the LLM call keyed by the job (a redelivered job gets its
// generation back, not billed twice), the email sent exactly once even when a
// job is redelivered or a send's answer is lost, "LLM ok, email failed"
// recorded as a partial success, and a job whose LLM call fails for good sent
// to the dead letter queue.
//
// Everything runs in the process: a fake LLM gateway and a fake mail server
// (httptest servers that fail as often as -fail-rate says), SQLite through a
// pure-Go driver in a temporary file, and a dead letter queue in the same
// file. Time runs -speed times faster than the presets' real waits.
//
//	go run ./examples/pipeline -jobs 1000 -fail-rate 0.3 -seed 7
//
// The last line of the output is one JSON object with the run's totals.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
)

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := run(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
}

// config is what the flags set.
type config struct {
	jobs      int
	failRate  float64 // probability that one call to a dependency fails
	seed      uint64
	redeliver float64 // share of messages whose first delivery dies unacknowledged
	speed     int64   // every wait of the presets, and every Retry-After, divided by this
	workers   int
	dbPath    string // "" means a temporary file, removed at the end
	noClaim   bool   // send emails without the claim, to show the duplicates it prevents
	// network wraps the client's transport, for tests that inject faults
	// (a *chaos.Scenario); nil leaves it as it is.
	network interface {
		Transport(base http.RoundTripper) http.RoundTripper
	}
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("pipeline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.jobs, "jobs", 1000, "number of jobs")
	fs.Float64Var(&c.failRate, "fail-rate", 0.3, "probability, in [0, 1], that one call to the LLM gateway or the mail server fails")
	fs.Uint64Var(&c.seed, "seed", 7, "seed of every injected failure: a run is reproducible")
	fs.Float64Var(&c.redeliver, "redeliver", 0.1, "share of messages, in [0, 1], whose worker dies before acknowledging them, so that they are delivered again")
	fs.Int64Var(&c.speed, "speed", 1000, "time runs this many times faster: every wait of the presets and every Retry-After is divided by it (1 = real time)")
	fs.IntVar(&c.workers, "workers", 8, "jobs processed at once")
	fs.StringVar(&c.dbPath, "db", "", "SQLite file to create and keep (default: a temporary file, removed at exit)")
	fs.BoolVar(&c.noClaim, "no-claim", false, "send emails without claiming them first, to see the duplicates the claim prevents")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := c.validate(); err != nil {
		fmt.Fprintln(stderr, "pipeline:", err)
		return c, err
	}
	return c, nil
}

func (c config) validate() error {
	switch {
	case c.jobs < 1:
		return fmt.Errorf("-jobs %d: must be at least 1", c.jobs)
	case !(c.failRate >= 0 && c.failRate <= 1):
		return fmt.Errorf("-fail-rate %v: must be in [0, 1]", c.failRate)
	case !(c.redeliver >= 0 && c.redeliver <= 1):
		return fmt.Errorf("-redeliver %v: must be in [0, 1]", c.redeliver)
	case c.speed < 1 || c.speed > maxSpeed:
		return fmt.Errorf("-speed %d: must be in [1, %d]", c.speed, maxSpeed)
	case c.workers < 1:
		return fmt.Errorf("-workers %d: must be at least 1", c.workers)
	}
	return nil
}
