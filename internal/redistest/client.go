package redistest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Client returns a go-redis client of c, closed when t ends, whose every
// node records the scripts it runs in the returned ScriptLog.
func (c *Cluster) Client(t testing.TB) (*goredis.ClusterClient, *ScriptLog) {
	t.Helper()
	log := &ScriptLog{runs: map[string]int{}}
	client := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: c.Addrs()})
	client.OnNewNode(func(n *goredis.Client) { n.AddHook(log) })
	t.Cleanup(func() { client.Close() })
	return client, log
}

// A ScriptLog is a go-redis hook (add it to each node of a cluster client,
// as Cluster.Client does: the cluster client routes each command to a node)
// that sees every command sent: it counts each script's runs (EVAL, EVALSHA
// and their _RO forms), and notes a script whose keys span hash slots.
type ScriptLog struct {
	mu        sync.Mutex
	runs      map[string]int // by SHA1
	total     int
	crossSlot []string
}

// DialHook implements goredis.Hook; it changes nothing.
func (l *ScriptLog) DialHook(next goredis.DialHook) goredis.DialHook { return next }

// ProcessHook implements goredis.Hook: it notes cmd, then sends it.
func (l *ScriptLog) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		l.note(cmd.Args())
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements goredis.Hook: it notes each command, then
// sends them.
func (l *ScriptLog) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		for _, cmd := range cmds {
			l.note(cmd.Args())
		}
		return next(ctx, cmds)
	}
}

func (l *ScriptLog) note(args []any) {
	sha, keys, ok := ScriptKeys(args)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.runs == nil {
		l.runs = map[string]int{}
	}
	l.runs[sha]++
	l.total++
	if !SameSlot(keys...) {
		l.crossSlot = append(l.crossSlot, fmt.Sprint(keys))
	}
}

// Runs returns how many scripts have run so far, all scripts together.
func (l *ScriptLog) Runs() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// CrossSlot returns the keys of each script run whose keys were in more
// than one hash slot, as Redis Cluster refuses them.
func (l *ScriptLog) CrossSlot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.crossSlot...)
}

// CheckOneSlot fails t (without stopping it) if a script ran on keys of
// more than one slot, or if one of scripts (names by SHA1, as a store's
// Scripts variable lists them) never ran.
func (l *ScriptLog) CheckOneSlot(t testing.TB, scripts map[string]string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.crossSlot) > 0 {
		t.Errorf("scripts ran on keys of more than one slot: %v", l.crossSlot)
	}
	for sha, name := range scripts {
		if l.runs[sha] == 0 {
			t.Errorf("the %s script never ran", name)
		}
	}
}

// Workers starts n goroutines that each call work again and again until
// the returned stop is called, or t ends. stop waits for them to return; it
// may be called more than once.
func Workers(t testing.TB, n int, work func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	stop = sync.OnceFunc(func() { close(done); wg.Wait() })
	t.Cleanup(stop) // also when the test fails while they run
	for range n {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				work()
			}
		})
	}
	return stop
}

// Until waits until cond holds, polling it every 5ms, while a test's
// workers run: at most 10s, then it fails t without stopping it (the caller
// still stops its workers).
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("no %s within 10s", what)
			return
		}
	}
}
