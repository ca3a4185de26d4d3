// Command dlq operates a dead letter queue of github.com/retrykit/retry: a
// SQLite file (dlq/sqlite) or a Redis server (dlq/redis).
//
//	dlq [--db FILE | --redis URL] [--prefix P] [--json] COMMAND [flags]
//
// Commands:
//
//	stats [--window 1h]     how many letters, how many arrived within the window, by reason,
//	                        by source, and the root-cause groups ("5,000 dead jobs" as "3 causes")
//	ls [filters] [--limit N]
//	                        the letters, oldest first
//	show ID                 one letter: every attempt's error, class and wait, the payload
//	replay (--id ID… | --group G | --all) [--dry-run] [--exec CMD]
//	                        send letters back, attempts reset, each exactly once; a letter
//	                        leaves the queue only when its enqueue succeeded. Redis: to the
//	                        job's source list, atomically (default). Either: through CMD, run
//	                        by sh with the payload on its standard input and DLQ_LETTER_ID,
//	                        DLQ_JOB_ID, DLQ_SOURCE and DLQ_METADATA (JSON) in its
//	                        environment; exit status 0 means enqueued.
//	purge (--id ID… | --group G | --all | filters) [--dry-run]
//	                        remove letters for good
//
// Filters: --source S, --reason R (max-attempts, budget, permanent, …),
// --class C (e.g. "http 503"), --group G, --since D|T and --until D|T, where
// D is a duration before now (2h) and T an RFC 3339 time.
//
// The environment variables DLQ_DB and DLQ_REDIS give defaults for --db
// and --redis. Tables are for people; --json prints JSON for scripts (a
// letter in the dlq encoding, version 1). The exit status is 0 on success,
// 1 when something failed (a letter not replayed included), 2 for a usage
// error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// errUsage marks a mistake in the command line: exit status 2.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "dlq:", err)
		fmt.Fprintln(stderr, "run 'dlq help' for usage")
		return 2
	}
	fmt.Fprintln(stderr, "dlq:", err)
	return 1
}

var commands = map[string]func(context.Context, *env, []string) error{
	"stats":  stats,
	"ls":     ls,
	"show":   show,
	"replay": replay,
	"purge":  purge,
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	g := &globals{db: os.Getenv("DLQ_DB"), redis: os.Getenv("DLQ_REDIS")}
	fs := newFlags("dlq", g, stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 || fs.Arg(0) == "help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cmd, ok := commands[fs.Arg(0)]
	if !ok {
		return fmt.Errorf("%w: unknown command %q", errUsage, fs.Arg(0))
	}
	e := &env{globals: g, out: stdout, errw: stderr}
	return cmd(ctx, e, fs.Args()[1:])
}

const usage = `usage: dlq [--db FILE | --redis URL] [--prefix P] [--json] COMMAND [flags]

commands:
  stats [--window 1h]                                  count, growth, reasons, sources, root-cause groups
  ls [filters] [--limit N]                             the letters, oldest first
  show ID                                              one letter in full
  replay (--id ID… | --group G | --all) [--dry-run] [--exec CMD]
                                                       send letters back, attempts reset, each once
  purge (--id ID… | --group G | --all | filters) [--dry-run]
                                                       remove letters for good

filters: --source S --reason R --class C --group G --since D|T --until D|T
environment: DLQ_DB, DLQ_REDIS (defaults of --db and --redis)
`
