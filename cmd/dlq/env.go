package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry/dlq"
	dlqredis "github.com/retrykit/retry/dlq/redis"
	"github.com/retrykit/retry/dlq/sqlite"
	"github.com/retrykit/retry/policy"
)

// globals are the flags every command accepts, before or after its name.
type globals struct {
	db, redis, prefix string
	json              bool
}

// env is what a command runs with.
type env struct {
	*globals
	out, errw io.Writer
	term      terminal
	now       time.Time
}

// newFlags returns a flag set that knows the global flags, their defaults
// being their current values (so that a flag given before the command
// survives the command's own parsing). It prints nothing: parse reports
// errors, and help the flags.
func newFlags(name string, g *globals) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&g.db, "db", g.db, "the SQLite `FILE` of the queue (it must exist)")
	fs.StringVar(&g.redis, "redis", g.redis, "the Redis `URL` of the queue, e.g. redis://localhost:6379/0")
	fs.StringVar(&g.prefix, "prefix", g.prefix, "the Redis key `PREFIX` (default {dlq}:)")
	fs.BoolVar(&g.json, "json", g.json, "print JSON")
	return fs
}

// parse parses flags, refusing stray arguments beyond maxArgs (-1: any).
// On -h or --help it prints help and fs's flags, and returns flag.ErrHelp.
func (e *env) parse(fs *flag.FlagSet, args []string, maxArgs int, help func() string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return e.help(fs, help())
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if maxArgs >= 0 && fs.NArg() > maxArgs {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(maxArgs))
	}
	return nil
}

// command parses the flags of the command name.
func (e *env) command(name string, fs *flag.FlagSet, args []string, maxArgs int) error {
	return e.parse(fs, args, maxArgs, commandUsage(name))
}

// open opens the queue the flags name. The returned function closes it.
func (e *env) open(ctx context.Context) (dlq.Queue, func(), error) {
	e.now = time.Now()
	switch {
	case e.db != "" && e.redis != "":
		return nil, nil, fmt.Errorf("%w: --db and --redis name two queues; give one", errUsage)
	case e.db != "":
		return e.openSQLite(ctx)
	case e.redis != "":
		return e.openRedis(ctx)
	}
	return nil, nil, fmt.Errorf("%w: no queue: give --db FILE or --redis URL (or DLQ_DB, DLQ_REDIS)", errUsage)
}

// queueName names the queue for a person: the file, or the Redis URL
// without its password.
func (e *env) queueName() string {
	if e.db != "" {
		return e.db
	}
	return redact(e.redis, e.redis)
}

// openSQLite opens the file --db names, which must exist: sqlite.Open
// would create it, and a mistyped path would read as an empty queue.
func (e *env) openSQLite(ctx context.Context) (dlq.Queue, func(), error) {
	info, err := os.Stat(e.db)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil, fmt.Errorf("--db %s: no such file (dlq opens the queue an application created, and creates none)", e.db)
	case err != nil:
		return nil, nil, fmt.Errorf("--db %s: %w", e.db, err)
	case info.IsDir():
		return nil, nil, fmt.Errorf("--db %s: is a directory, not a SQLite file", e.db)
	}
	q, err := sqlite.Open(ctx, e.db, sqlite.Config{})
	if err != nil {
		return nil, nil, err
	}
	return q, func() { q.Close() }, nil
}

func (e *env) openRedis(ctx context.Context) (dlq.Queue, func(), error) {
	o, err := goredis.ParseURL(e.redis)
	if err != nil {
		return nil, nil, badRedisURL(e.redis, err)
	}
	c := goredis.NewClient(o)
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("redis %s: %w", o.Addr, err)
	}
	q, err := dlqredis.New(c, dlqredis.Config{Prefix: e.prefix})
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return q, func() { c.Close() }, nil
}

// badRedisURL reports an invalid --redis URL without its password. The
// URL parser quotes pieces of what it could not parse, which may be pieces
// of a password: for a URL with a user part that does not parse, only the
// expected form is said.
func badRedisURL(raw string, err error) error {
	if _, perr := url.Parse(raw); perr != nil && userinfo(raw) != "" {
		return fmt.Errorf("%w: --redis %s: not a URL of the form redis://[user:password@]host:port/db", errUsage, redact(raw, raw))
	}
	return fmt.Errorf("%w: --redis %s: %s", errUsage, redact(raw, raw), redact(err.Error(), raw))
}

// userinfo returns the user and password part of the URL raw, as it stands
// in raw: what lies between "://" and the last "@".
func userinfo(raw string) string {
	_, rest, _ := strings.Cut(raw, "://")
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		return rest[:at]
	}
	return ""
}

// redact masks in s the user and password of the URL raw, as they stand in
// raw and as they decode.
func redact(s, raw string) string {
	ui := userinfo(raw)
	if ui == "" {
		return s
	}
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			s = strings.ReplaceAll(s, pw, "xxxxx")
		}
	}
	return strings.ReplaceAll(s, ui, "xxxxx")
}

// filterFlags are the flags that select letters.
type filterFlags struct {
	ids                              multi
	source, stopReason, class, group string
	since, until                     string
	all                              bool
}

// stopReasons lists the stop reasons a letter can have: every reason of
// the one list but the caller's cancellation, which makes no letter, and
// failed (an error that did not come from a retry loop).
func stopReasons() string {
	var labels []string
	for s := range policy.Stops() {
		if s != policy.StopCanceled {
			labels = append(labels, s.String())
		}
	}
	return strings.Join(append(labels, "failed"), ", ")
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func (f *filterFlags) register(fs *flag.FlagSet, selectors bool) {
	fs.StringVar(&f.source, "source", "", "only letters of this source queue")
	fs.StringVar(&f.stopReason, "stop-reason", "", "only letters whose retry loop gave up for this reason: "+stopReasons())
	fs.StringVar(&f.class, "class", "", `only letters whose last error has this class, e.g. "http 503"`)
	fs.StringVar(&f.group, "group", "", "only letters of this root-cause group (see stats)")
	fs.StringVar(&f.since, "since", "", "only letters that failed last at or after this time (RFC 3339) or this long ago (2h)")
	fs.StringVar(&f.until, "until", "", "only letters that failed last before this time (RFC 3339) or this long ago (2h)")
	if selectors {
		fs.Var(&f.ids, "id", "this letter (repeatable)")
		fs.BoolVar(&f.all, "all", false, "every letter")
	}
}

// filter turns the flags into a dlq.Filter.
func (f *filterFlags) filter(now time.Time) (dlq.Filter, error) {
	out := dlq.Filter{IDs: f.ids, Source: f.source, StopReason: f.stopReason, Class: f.class, Group: f.group}
	var err error
	if out.Since, err = when("--since", f.since, now); err != nil {
		return out, err
	}
	out.Until, err = when("--until", f.until, now)
	return out, err
}

// selects reports whether some flag narrows the selection.
func (f *filterFlags) selects() bool {
	return len(f.ids) > 0 || f.source != "" || f.stopReason != "" || f.class != "" || f.group != "" || f.since != "" || f.until != ""
}

// when reads a time: RFC 3339, or a duration before now.
func when(name, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, fmt.Errorf("%w: %s %q: want an RFC 3339 time or a duration such as 2h", errUsage, name, v)
	}
	return t, nil
}
