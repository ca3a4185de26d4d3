// Command dlq operates a dead letter queue of github.com/retrykit/retry: a
// SQLite file (dlq/sqlite) or a Redis server (dlq/redis).
//
//	dlq [--db FILE | --redis URL] [--prefix P] [--json] COMMAND [flags]
//
// Commands:
//
//	stats [--window 1h]     how many letters, how many arrived within the window, by stop reason,
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
//	                        environment; exit status 0 means enqueued. A letter whose
//	                        claim lapsed during a slow enqueue while another replay took
//	                        it is reported "lapsed": enqueued, perhaps twice (exit 1).
//	purge (--id ID… | --group G | --all | filters) [--dry-run] [--yes]
//	                        remove letters for good; --all asks first on a terminal,
//	                        and is refused without one unless --yes is given
//	serve [--addr A] [--token-file FILE] [--exec CMD]
//	                        the dashboard in the browser (package dlq/dashboard): the
//	                        root causes, the letters, replay and purge behind a
//	                        confirmation. It listens on 127.0.0.1:8080 by default; any
//	                        address but a loopback one needs a token (--token-file, or
//	                        DLQ_TOKEN), which the browser gives as the password of basic
//	                        authentication. Replays go where replay's would; a SQLite
//	                        queue without --exec is shown with replay off.
//	help                    the commands (also dlq --help); dlq COMMAND --help: its flags
//
// Filters: --source S, --stop-reason R (why the retry loop gave up:
// max-attempts, budget, permanent, …), --class C (the last error's class,
// e.g. "http 503"), --group G, --since D|T and --until D|T, where D is a
// duration before now (2h) and T an RFC 3339 time.
//
// --db names an existing SQLite file: no command creates one (the
// application that dead-letters jobs does), so a path that does not exist is
// an error, not an empty queue. An invalid --redis URL is reported with its
// password masked. The environment variables DLQ_DB and DLQ_REDIS give
// defaults for --db and --redis. Tables are for people; --json prints JSON
// for scripts (a letter in the dlq encoding, version 2). The exit status is
// 0 on success, 1 when something failed (a letter not replayed included, a
// purge declined), 2 for a usage error.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mattn/go-isatty"
)

// errUsage marks a mistake in the command line: exit status 2.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tty := isatty.IsTerminal(os.Stdin.Fd()) || isatty.IsCygwinTerminal(os.Stdin.Fd())
	os.Exit(run(ctx, os.Args[1:], terminal{in: os.Stdin, tty: tty}, os.Stdout, os.Stderr))
}

// terminal is where a command asks a person: standard input, if it is a
// terminal.
type terminal struct {
	in  io.Reader
	tty bool
}

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, term terminal, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, term, stdout, stderr)
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

// command is one of dlq's commands.
type command struct {
	name, args, summary string
	run                 func(context.Context, *env, []string) error
}

// commands, in the order help lists them. They are set by init: a command's
// help reads this table.
var commands []command

func init() {
	commands = []command{
		{"stats", "[--window 1h]", "count, growth, stop reasons, sources, root-cause groups", stats},
		{"ls", "[filters] [--limit N]", "the letters, oldest first", ls},
		{"show", "ID", "one letter in full", show},
		{"replay", "(--id ID… | --group G | --all) [--dry-run] [--exec CMD]", "send letters back, attempts reset, each once", replay},
		{"purge", "(--id ID… | --group G | --all | filters) [--dry-run] [--yes]", "remove letters for good (--all asks first)", purge},
		{"serve", "[--addr 127.0.0.1:8080] [--token-file FILE] [--exec CMD]", "the dashboard in the browser", serve},
	}
}

func find(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func dispatch(ctx context.Context, args []string, term terminal, stdout, stderr io.Writer) error {
	g := &globals{db: os.Getenv("DLQ_DB"), redis: os.Getenv("DLQ_REDIS")}
	e := &env{globals: g, out: stdout, errw: stderr, term: term}
	fs := newFlags("dlq", g)
	if err := e.parse(fs, args, -1, usage); err != nil {
		return err
	}
	if fs.NArg() == 0 || fs.Arg(0) == "help" {
		return e.help(fs, usage())
	}
	cmd, ok := find(fs.Arg(0))
	if !ok {
		return fmt.Errorf("%w: unknown command %q", errUsage, fs.Arg(0))
	}
	return cmd.run(ctx, e, fs.Args()[1:])
}

// usage is dlq's help: the commands, then (from the flag set) the global
// flags.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: dlq [--db FILE | --redis URL] [--prefix P] [--json] COMMAND [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-7s %s\n          %s\n", c.name, c.args, c.summary)
	}
	b.WriteString(`  help    this text; dlq COMMAND --help: the command's flags

filters: --source S --stop-reason R --class C --group G --since D|T --until D|T
environment: DLQ_DB, DLQ_REDIS (defaults of --db and --redis), DLQ_TOKEN (serve's token)

global flags, before or after the command:
`)
	return b.String()
}

// commandUsage is the help of one command.
func commandUsage(name string) func() string {
	return func() string {
		c, _ := find(name)
		return "usage: dlq " + c.name + " " + c.args + "\n" + c.summary + "\n\nflags:\n"
	}
}

// help prints text and fs's flags on standard output, and returns
// flag.ErrHelp: exit status 0.
func (e *env) help(fs *flag.FlagSet, text string) error {
	fmt.Fprint(e.out, text)
	fs.SetOutput(e.out)
	fs.PrintDefaults()
	return flag.ErrHelp
}

// confirm asks a person on the terminal, and reports whether they said yes.
func (e *env) confirm(question string) bool {
	fmt.Fprintf(e.errw, "%s [y/N] ", question)
	line, _ := bufio.NewReader(e.term.in).ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes"
}
