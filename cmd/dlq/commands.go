package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/retrykit/retry/dlq"
	dlqredis "github.com/retrykit/retry/dlq/redis"
)

func stats(ctx context.Context, e *env, args []string) error {
	fs := newFlags("dlq stats", e.globals)
	window := fs.Duration("window", time.Hour, "the span over which growth is counted")
	if err := e.command("stats", fs, args, 0); err != nil {
		return err
	}
	if *window <= 0 {
		return fmt.Errorf("%w: --window %v: must be positive", errUsage, *window)
	}
	q, closeQ, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer closeQ()
	sum, err := dlq.Summarize(ctx, q, dlq.Filter{})
	if err != nil {
		return err
	}
	growth, err := q.Count(ctx, dlq.Filter{Since: e.now.Add(-*window)})
	if err != nil {
		return err
	}
	s := summarize(sum, growth, *window)
	if e.json {
		return writeJSON(e.out, s)
	}
	return s.print(e.out)
}

func ls(ctx context.Context, e *env, args []string) error {
	fs := newFlags("dlq ls", e.globals)
	var ff filterFlags
	ff.register(fs, false)
	limit := fs.Int("limit", 0, "at most this many letters, the oldest (0: all)")
	if err := e.command("ls", fs, args, 0); err != nil {
		return err
	}
	q, closeQ, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer closeQ()
	f, err := ff.filter(e.now)
	if err != nil {
		return err
	}
	f.Limit = *limit
	letters, err := q.List(ctx, f)
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.out, encodeAll(letters))
	}
	return printLetters(e.out, letters)
}

func show(ctx context.Context, e *env, args []string) error {
	fs := newFlags("dlq show", e.globals)
	if err := e.command("show", fs, args, 1); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: show needs a letter id", errUsage)
	}
	q, closeQ, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer closeQ()
	l, err := q.Get(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.out, encoded(l))
	}
	return printLetter(e.out, l)
}

func replay(ctx context.Context, e *env, args []string) error {
	fs := newFlags("dlq replay", e.globals)
	var sel filterFlags
	fs.Var(&sel.ids, "id", "replay this letter (repeatable)")
	fs.StringVar(&sel.group, "group", "", "replay the letters of this root-cause group (see stats)")
	fs.BoolVar(&sel.all, "all", false, "replay every letter")
	dry := fs.Bool("dry-run", false, "only say which letters would be replayed")
	command := fs.String("exec", "", "enqueue through this shell command (payload on stdin); the default for Redis is the job's source list")
	if err := e.command("replay", fs, args, 0); err != nil {
		return err
	}
	if n := btoi(len(sel.ids) > 0) + btoi(sel.group != "") + btoi(sel.all); n != 1 {
		return fmt.Errorf("%w: replay needs one of --id, --group or --all", errUsage)
	}
	q, closeQ, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer closeQ()
	f, _ := sel.filter(e.now)
	if *dry {
		return e.dryRun(ctx, q, f, "replay")
	}
	to, err := target(q, *command, e)
	if err != nil {
		return err
	}
	rep, err := dlq.Replay(ctx, q, f, to)
	if e.json {
		if jerr := writeJSON(e.out, replayJSON(rep)); jerr != nil {
			return jerr
		}
	} else {
		printReplay(e.out, rep)
	}
	if err != nil && len(rep.Failed)+len(rep.Lapsed) > 0 {
		return fmt.Errorf("%d letters not replayed cleanly: %d failed and kept, %d lapsed", len(rep.Failed)+len(rep.Lapsed), len(rep.Failed), len(rep.Lapsed))
	}
	return err
}

// target is where replayed jobs go: the command, or Redis's source lists.
func target(q dlq.Queue, command string, e *env) (dlq.Enqueuer, error) {
	if command != "" {
		return execEnqueuer{command: command, stderr: e.errw}, nil
	}
	if rq, ok := q.(*dlqredis.Queue); ok {
		return rq.ToSource(), nil
	}
	return nil, fmt.Errorf("%w: a SQLite queue knows no source queue: give --exec CMD to enqueue each job", errUsage)
}

func purge(ctx context.Context, e *env, args []string) error {
	fs := newFlags("dlq purge", e.globals)
	var ff filterFlags
	ff.register(fs, true)
	dry := fs.Bool("dry-run", false, "only say which letters would be purged")
	yes := fs.Bool("yes", false, "purge --all without asking")
	if err := e.command("purge", fs, args, 0); err != nil {
		return err
	}
	if ff.all == ff.selects() {
		return fmt.Errorf("%w: purge needs --all, or a selection (--id, --group, --source, --since, …), not both", errUsage)
	}
	ask := ff.all && !*dry && !*yes
	if ask && !e.term.tty {
		return fmt.Errorf("%w: purge --all removes every letter: give --yes to confirm (standard input is no terminal to ask on)", errUsage)
	}
	q, closeQ, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer closeQ()
	f, err := ff.filter(e.now)
	if err != nil {
		return err
	}
	if *dry {
		return e.dryRun(ctx, q, f, "purge")
	}
	if ask {
		if err := e.confirmPurgeAll(ctx, q); err != nil {
			return err
		}
	}
	n, err := q.Purge(ctx, f)
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.out, map[string]int{"purged": n})
	}
	fmt.Fprintf(e.out, "purged %d letters\n", n)
	return nil
}

// confirmPurgeAll asks on the terminal before every letter goes.
func (e *env) confirmPurgeAll(ctx context.Context, q dlq.Queue) error {
	n, err := q.Count(ctx, dlq.Filter{})
	if err != nil {
		return err
	}
	if !e.confirm(fmt.Sprintf("purge all %d letters of %s? This cannot be undone.", n, e.queueName())) {
		return errors.New("purge cancelled: nothing was removed")
	}
	return nil
}

// dryRun lists what a replay or purge would take.
func (e *env) dryRun(ctx context.Context, q dlq.Queue, f dlq.Filter, verb string) error {
	letters, err := q.List(ctx, f)
	if err != nil {
		return err
	}
	if e.json {
		ids := []string{}
		for _, l := range letters {
			ids = append(ids, l.ID)
		}
		return writeJSON(e.out, map[string]any{"dry_run": true, "selected": ids})
	}
	fmt.Fprintf(e.out, "would %s %d letters:\n", verb, len(letters))
	return printLetters(e.out, letters)
}

// summary is what stats prints.
type summary struct {
	Count    int            `json:"count"`
	Window   string         `json:"window"`
	Growth   int            `json:"growth"`
	Oldest   *time.Time     `json:"oldest,omitempty"`
	Newest   *time.Time     `json:"newest,omitempty"`
	ByStop   map[string]int `json:"by_stop_reason"`
	BySource map[string]int `json:"by_source"`
	Groups   []groupJSON    `json:"groups"`
}

type groupJSON struct {
	ID           string    `json:"id"`
	Count        int       `json:"count"`
	Class        string    `json:"class"`
	Signature    string    `json:"signature"`
	FirstSeen    time.Time `json:"first_seen"`
	LastSeen     time.Time `json:"last_seen"`
	ExampleID    string    `json:"example_id"`
	ExampleError string    `json:"example_error"`
}

// summarize is what stats prints of the queue's Summary: counts and
// groups added up by the queue, not by reading every letter.
func summarize(sum dlq.Summary, growth int, window time.Duration) summary {
	s := summary{Count: sum.Count, Window: window.String(), Growth: growth, ByStop: sum.ByStopReason, BySource: sum.BySource, Groups: []groupJSON{}}
	if sum.Count > 0 {
		s.Oldest, s.Newest = &sum.Oldest, &sum.Newest
	}
	for _, g := range sum.Groups {
		s.Groups = append(s.Groups, groupJSON{ID: g.ID, Count: g.Count, Class: g.Class, Signature: g.Signature,
			FirstSeen: g.FirstSeen, LastSeen: g.LastSeen, ExampleID: g.Example.ID, ExampleError: g.Example.Last.Error})
	}
	return s
}

type replayOut struct {
	Replayed []string          `json:"replayed"`
	Skipped  []string          `json:"skipped"`
	Lapsed   []string          `json:"lapsed"`
	Failed   map[string]string `json:"failed"`
}

func replayJSON(rep dlq.ReplayReport) replayOut {
	out := replayOut{Replayed: nonNil(rep.Replayed), Skipped: nonNil(rep.Skipped), Lapsed: nonNil(rep.Lapsed), Failed: map[string]string{}}
	for _, id := range slices.Sorted(maps.Keys(rep.Failed)) {
		out.Failed[id] = rep.Failed[id].Error()
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
