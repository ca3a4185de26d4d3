package rediswait_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry/internal/redistest"
	"github.com/retrykit/retry/internal/rediswait"
)

var set = goredis.NewScript(`redis.call('SET', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])`)

func client(t *testing.T, addr string) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestAWriteIsAcknowledgedOnlyOnceAReplicaHasIt(t *testing.T) {
	primary := redistest.Start(t, "--repl-diskless-sync-delay", "0")
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", strings.Split(primary.Addr, ":")[1])
	c := client(t, primary.Addr)
	ctx := context.Background()
	waitSynced(t, replica.Addr)

	v, err := rediswait.Run(ctx, c, 1, set, []string{"k"}, "v").Text()
	if err != nil || v != "v" {
		t.Fatalf("Run = %q, %v; want the script's reply", v, err)
	}
	if got, _ := client(t, replica.Addr).Get(ctx, "k").Result(); got != "v" {
		t.Fatalf("the replica holds %q once the write is acknowledged; want v", got)
	}

	replica.Pause() // a replica that does not answer: the write is not acknowledged
	defer replica.Resume()
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = rediswait.Run(wctx, c, 1, set, []string{"k"}, "w").Text()
	if err == nil || !strings.Contains(err.Error(), "reached 0 of 1 replica") {
		t.Fatalf("Run with the replica paused = %v; want an error: 0 of 1 replicas", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Run waited %v; want about the context's 100ms", d)
	}
}

func TestWithoutReplicasTheScriptRunsAsUsual(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	if v, err := rediswait.Run(context.Background(), c, 0, set, []string{"k"}, "v").Text(); err != nil || v != "v" {
		t.Fatalf("Run = %q, %v", v, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := rediswait.Run(ctx, c, 1, set, []string{"k"}, "v").Text()
	if err == nil {
		t.Fatal("Run waiting for a replica of a server with none succeeded")
	}
}

func TestARingIsNotSupported(t *testing.T) {
	r := goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	defer r.Close()
	if rediswait.Supported(r) {
		t.Fatal("a Ring cannot pin a write and its WAIT to one connection")
	}
	err := rediswait.Run(context.Background(), r, 1, set, []string{"k"}, "v").Err()
	if err == nil || errors.Is(err, goredis.Nil) {
		t.Fatalf("Run on a Ring = %v; want an error", err)
	}
}

// waitSynced waits until the replica at addr has its primary's data.
func waitSynced(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		info, err := redistest.Do(addr, "INFO", "replication")
		if s, _ := info.(string); err == nil && strings.Contains(s, "master_link_status:up") {
			return
		}
	}
	t.Fatal("the replica did not sync")
}
