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

// FailoverClient returns a go-redis client of c for a test that kills a
// node, closed when t ends unless the test closes it sooner. go-redis
// starts a goroutine that probes a dead node every second once PoolSize
// dials to it failed, and it outlives Close by up to a second: a pool larger
// than the failed dials keeps goleak quiet.
func (c *Cluster) FailoverClient(t testing.TB) *goredis.ClusterClient {
	t.Helper()
	client := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: c.Addrs(), DialTimeout: 200 * time.Millisecond, PoolSize: 1000})
	t.Cleanup(func() { client.Close() })
	return client
}

// FailOver kills primary after its replica has fallen behind by lag, and
// waits for the cluster to recover: it cuts replica off primary's writes
// (Detach), lets lag pass while the test's workers still run, calls
// killing, kills primary (SIGKILL), calls killed (where the test stops its
// workers, whose calls in flight end with errors, and closes its clients),
// waits for replica to take over, restarts primary — it rejoins as its old
// replica's replica — and waits for the cluster to be healthy again.
func (c *Cluster) FailOver(t testing.TB, primary, replica *Server, lag time.Duration, killing, killed func()) {
	t.Helper()
	c.Detach(t, replica)
	time.Sleep(lag)
	killing()
	primary.Stop() // SIGKILL
	killed()
	c.WaitFailover(t)
	primary.Restart(t)
	c.WaitFailover(t)
}

// CheckReplicas runs the cases of a test that a Redis store's constructor
// checks its Config.Replicas, each as a subtest: build builds a store on
// client waiting for replicas, and returns its error; invalid reports
// whether an error is the *retry.InvalidError that names the field. A
// negative count is refused; so is a Ring waiting for a replica (it cannot
// send a write and its WAIT on one connection); a Ring without replicas to
// wait for, and a Client waiting for some, are fine. The clients point at
// a closed port: nothing is sent.
func CheckReplicas(t *testing.T, build func(client goredis.UniversalClient, replicas int) error, invalid func(error) bool) {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	ring := goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	defer ring.Close()
	tests := []struct {
		name   string
		client goredis.UniversalClient
		n      int
		ok     bool
	}{
		{"a negative count is refused", c, -1, false},
		{"a Ring cannot send a write and its WAIT on one connection", ring, 1, false},
		{"a Ring without replicas to wait for is fine", ring, 0, true},
		{"a Client may wait for replicas", c, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := build(tt.client, tt.n)
			switch {
			case tt.ok && err != nil:
				t.Fatalf("New = %v", err)
			case !tt.ok && !invalid(err):
				t.Fatalf("New = %v; want an *InvalidError naming redis.Config.Replicas", err)
			}
		})
	}
}
