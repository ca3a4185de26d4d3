package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry/dlq"
	dlqredis "github.com/retrykit/retry/dlq/redis"
	"github.com/retrykit/retry/dlq/sqlite"
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
	now       time.Time
}

// newFlags returns a flag set that knows the global flags, their defaults
// being their current values (so that a flag given before the command
// survives the command's own parsing).
func newFlags(name string, g *globals, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&g.db, "db", g.db, "the SQLite file of the queue")
	fs.StringVar(&g.redis, "redis", g.redis, "the Redis URL of the queue, e.g. redis://localhost:6379/0")
	fs.StringVar(&g.prefix, "prefix", g.prefix, "the Redis key prefix (default {dlq}:)")
	fs.BoolVar(&g.json, "json", g.json, "print JSON")
	return fs
}

// parse parses a command's flags, refusing stray arguments beyond maxArgs.
func parse(fs *flag.FlagSet, args []string, maxArgs int) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > maxArgs {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(maxArgs))
	}
	return nil
}

// open opens the queue the flags name. The returned function closes it.
func (e *env) open(ctx context.Context) (dlq.Queue, func(), error) {
	e.now = time.Now()
	switch {
	case e.db != "" && e.redis != "":
		return nil, nil, fmt.Errorf("%w: --db and --redis name two queues; give one", errUsage)
	case e.db != "":
		q, err := sqlite.Open(ctx, e.db, sqlite.Options{})
		if err != nil {
			return nil, nil, err
		}
		return q, func() { q.Close() }, nil
	case e.redis != "":
		return e.openRedis(ctx)
	}
	return nil, nil, fmt.Errorf("%w: no queue: give --db FILE or --redis URL (or DLQ_DB, DLQ_REDIS)", errUsage)
}

func (e *env) openRedis(ctx context.Context) (dlq.Queue, func(), error) {
	o, err := goredis.ParseURL(e.redis)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: --redis %s: %v", errUsage, e.redis, err)
	}
	c := goredis.NewClient(o)
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("redis %s: %w", o.Addr, err)
	}
	q, err := dlqredis.New(c, dlqredis.Options{Prefix: e.prefix})
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return q, func() { c.Close() }, nil
}

// filterFlags are the flags that select letters.
type filterFlags struct {
	ids                          multi
	source, reason, class, group string
	since, until                 string
	all                          bool
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func (f *filterFlags) register(fs *flag.FlagSet, selectors bool) {
	fs.StringVar(&f.source, "source", "", "only letters of this source queue")
	fs.StringVar(&f.reason, "reason", "", "only letters dead-lettered for this reason (max-attempts, budget, permanent, …)")
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
	out := dlq.Filter{IDs: f.ids, Source: f.source, Reason: dlq.Reason(f.reason), Class: f.class, Group: f.group}
	var err error
	if out.Since, err = when("--since", f.since, now); err != nil {
		return out, err
	}
	out.Until, err = when("--until", f.until, now)
	return out, err
}

// selects reports whether some flag narrows the selection.
func (f *filterFlags) selects() bool {
	return len(f.ids) > 0 || f.source != "" || f.reason != "" || f.class != "" || f.group != "" || f.since != "" || f.until != ""
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
